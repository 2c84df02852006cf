package kafka

import "github.com/IBM/sarama"

// api names a Kafka request whose version streamwatch chooses itself (sarama's admin client
// would choose for the others).
type api string

const (
	apiFetch          api = "Fetch"
	apiDescribeGroups api = "DescribeGroups"
	apiListGroups     api = "ListGroups"
	apiOffsetFetch    api = "OffsetFetch"
)

// since is a request version and the oldest Kafka release (clusters[].version) that answers it.
type since struct {
	kafka   sarama.KafkaVersion
	version int16
}

// requestVersions is the one table of which version of each request streamwatch sends to a
// cluster of a given version: the first row the cluster is at least, newest first; a cluster
// older than every row gets version 0. OffsetFetch's version is sarama's
// (NewOffsetFetchRequest); its rows say what streamwatch relies on: a null topic list (all of
// a group's commits, v2, Kafka 0.10.2) and several groups in one request (v8, Kafka 3.0,
// KIP-709).
var requestVersions = map[api][]since{
	apiFetch: {{sarama.V2_7_0_0, 12}, {sarama.V2_3_0_0, 11}, {sarama.V2_1_0_0, 10}, {sarama.V2_0_0_0, 8},
		{sarama.V1_1_0_0, 7}, {sarama.V1_0_0_0, 6}, {sarama.V0_11_0_0, 5}, {sarama.V0_10_1_0, 3}},
	apiDescribeGroups: {{sarama.V2_4_0_0, 5}, {sarama.V2_3_0_0, 3}, {sarama.V2_0_0_0, 2}, {sarama.V0_11_0_0, 1}},
	// v5's type filter would hide classic groups on KIP-848 brokers: v4 at most.
	apiListGroups:  {{sarama.V2_6_0_0, 4}, {sarama.V2_4_0_0, 3}, {sarama.V2_0_0_0, 2}, {sarama.V0_11_0_0, 1}},
	apiOffsetFetch: {{sarama.V3_0_0_0, 8}, {sarama.V0_10_2_0, 2}},
}

// requestVersion is the version of a request to send to a cluster of version v.
func requestVersion(a api, v sarama.KafkaVersion) int16 {
	for _, r := range requestVersions[a] {
		if v.IsAtLeast(r.kafka) {
			return r.version
		}
	}
	return 0
}
