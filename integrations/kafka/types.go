package kafka

import (
	"time"
)

// Offsets that are not offsets.
const (
	NoOffset      int64 = -1 // the group has no committed offset for the partition
	UnknownOffset int64 = -2 // the broker that knows did not answer
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Member is one member of a consumer group.
type Member struct {
	ID         string
	InstanceID string // static membership (group.instance.id), if any
	ClientID   string
	Host       string
	// Assigned holds the member's partitions by topic, sorted. Only
	// groups of protocol type "consumer" publish assignments in a form
	// that can be read.
	Assigned map[string][]int32
	// Subscribed lists the topics the member asked for, when known.
	Subscribed []string
}

// GroupInfo is what the group coordinator says about a group.
type GroupInfo struct {
	Name         string
	State        string // Stable, Empty, PreparingRebalance, CompletingRebalance, Dead; "" when unknown
	ProtocolType string // "consumer" for consumers, "" for groups that only hold commits
	Protocol     string // the assignor, such as range or cooperative-sticky
	Coordinator  Broker
	Members      []Member // sorted by client ID, then member ID
}

// AssignedTo reports the member that holds topic/partition, if any.
func (g GroupInfo) AssignedTo(topic string, partition int32) (Member, bool) {
	for _, m := range g.Members {
		for _, p := range m.Assigned[topic] {
			if p == partition {
				return m, true
			}
		}
	}
	return Member{}, false
}

// membersOn counts the members holding or asking for a partition of topic.
func (g GroupInfo) membersOn(topic string) int {
	n := 0
	for _, m := range g.Members {
		if len(m.Assigned[topic]) > 0 {
			n++
			continue
		}
		for _, t := range m.Subscribed {
			if t == topic {
				n++
				break
			}
		}
	}
	return n
}

// AgeSource says how PartitionLag.Age was obtained.
type AgeSource int

const (
	AgeNone      AgeSource = iota // no age: no lag, or nothing to go on
	AgeRecord                     // the timestamp of the record at the committed offset
	AgeEstimated                  // interpolated from stored (log end, time) samples
	AgeAtLeast                    // older than every stored sample: Age is a lower bound
)

// PartitionLag is one partition of a lag report.
type PartitionLag struct {
	Topic     string
	Partition int32
	Leader    int32 // broker ID; -1 when the partition has no leader
	LogEnd    int64 // high watermark; UnknownOffset when the leader did not answer
	Committed int64 // NoOffset without a commit; UnknownOffset when the coordinator did not answer
	Lag       int64 // LogEnd - Committed; -1 when either is missing
	// Member is the client ID of the member the partition is assigned
	// to, "" when none.
	Member string
	// Age is how old the oldest unconsumed record is (see AgeSource).
	Age       time.Duration
	AgeSource AgeSource
	// NoAge says why an exact age is missing, for example a committed offset below the log
	// start; "" when the record's time was not asked for or was found.
	NoAge NoTime `json:",omitempty"`
	// AgeNote is the broker's error message for the partition (NoAge NoTimeBrokerError), or
	// an earlier version's words for why the age is missing (without NoAge).
	AgeNote string
	Status  Status
	// Evidence is the rule that decided Status and the numbers it used besides Committed,
	// LogEnd and Lag.
	Evidence Evidence
}

// LagTotals sums a lag report.
type LagTotals struct {
	Partitions int
	Lag        int64 // over partitions whose lag is known
	NoCommit   int   // partitions without a committed offset
	Unknown    int   // partitions whose log end or commit is unknown
	MaxAge     time.Duration
	MaxAgeAt   TopicPartition
	MaxAgeFrom AgeSource
}

// NoTime says why a record's timestamp is not known (PartitionLag.NoAge, RecordTime.NoTime).
type NoTime string

// The reasons a record has no timestamp.
const (
	NoTimeNoPartition NoTime = "no_partition" // the fetch answer has no block for the partition
	NoTimeOutOfRange  NoTime = "out_of_range" // the offset is outside the log (deleted by retention?)
	NoTimeNoRecord    NoTime = "no_record"    // the fetch answer holds no record at the offset
	NoTimeBrokerError NoTime = "broker_error" // the broker answered the partition with an error (its message beside)
)

// Part names a part of an answer (Unavailable.What); Unavailable.Of says whose, where the
// part names it.
type Part string

// The parts of an answer that can be unavailable.
const (
	PartLogStarts     Part = "log_starts"        // the partitions' log start offsets
	PartLogEnds       Part = "log_ends"          // the partitions' log end offsets
	PartCommitted     Part = "committed"         // the group's committed offsets
	PartGroupState    Part = "group_state"       // the group's state (DescribeGroups)
	PartGroupStates   Part = "group_states"      // the states of the groups one coordinator describes
	PartGroupCommits  Part = "group_commits"     // the commits of the groups one coordinator fetches
	PartCoordinated   Part = "coordinated"       // the groups the broker Of coordinates (ListGroups)
	PartTopicGroups   Part = "topic_groups"      // the groups on the topic Of
	PartRecordTimes   Part = "record_timestamps" // the timestamps of the records at the committed offsets
	PartStoredSamples Part = "stored_samples"    // streamwatch's own stored lag samples
)

// Unavailable is a part of an answer that could not be obtained. Err is
// usually a *BrokerError naming the broker, the request and the wait.
type Unavailable struct {
	What       Part
	Of         string           // the broker (PartCoordinated) or the topic (PartTopicGroups)
	Partitions []TopicPartition // the partitions concerned; nil for group-wide parts
	Err        error
	// groups are the groups a batched request concerned (a round gives each pipeline the
	// failures of its own groups only).
	groups []string
}

// part names the part in errors: its code, and whose ("coordinated (broker 2 (10.0.0.9:9092))").
func (u Unavailable) part() string {
	if u.Of == "" {
		return string(u.What)
	}
	return string(u.What) + " (" + u.Of + ")"
}

// CommitMovement is how a group's committed offsets on a topic moved over
// the stored samples.
type CommitMovement struct {
	Samples   int           // stored sampling rounds
	Span      time.Duration // from the first stored round to now
	Advanced  int64         // sum of committed offsets now minus at the first round
	LastMoved time.Time     // when the sum last changed; zero if it did not change in the window
}

// LagReport answers `lag PIPELINE` and `lag GROUP TOPIC`.
type LagReport struct {
	Cluster  string
	Pipeline string // "" for an ad-hoc group
	Topics   []string
	At       time.Time
	Group    GroupInfo
	// GroupExists is false when the coordinator knows no such group
	// (state Dead) and the group has no commit on the topics.
	GroupExists bool
	Partitions  []PartitionLag // sorted by topic, then partition
	Totals      LagTotals

	// Status is the evaluator's verdict over stored samples plus this
	// answer; Summary is what it rests on (the worst partition's evidence, the counts).
	Status       Status
	Summary      Summary
	StatusCounts map[Status]int
	History      int // stored sampling rounds the verdict used
	StallAfter   time.Duration
	AllowedLag   int64
	// CommitsMoved is when the stored samples last saw a committed offset of the group
	// change; zero when none changed in the window.
	CommitsMoved time.Time

	// Mismatch is set when the documented group is idle while another
	// group consumes the topics.
	Mismatch *Mismatch
	// Unavailable lists what could not be fetched; the rest of the report
	// stands.
	Unavailable []Unavailable
	Elapsed     time.Duration
}

// Mismatch is the wrong-group finding, as data: why the documented group counts as idle and
// the groups that do consume (commands words it with the report's group, cluster and topics).
type Mismatch struct {
	Documented string
	Reason     IdleReason
	// Watched is true, for IdleEmpty, when stored samples showed the group's commits: they
	// stood still over Unchanged. False: no stored samples to show them moving.
	Watched   bool
	Unchanged time.Duration
	Active    []TopicGroup // the groups that do consume, most lagging first
}

// IdleReason is why the documented group counts as idle.
type IdleReason string

// The idle reasons: their values are the codes replies show ("wrong group? empty").
const (
	IdleMissing   IdleReason = "missing"    // the coordinator knows no such group and it has no commit on the topics
	IdleStalled   IdleReason = "stalled"    // the report's Status is STALLED (its Summary says why)
	IdleStopped   IdleReason = "stopped"    // the report's Status is STOPPED
	IdleNoCommits IdleReason = "no commits" // no member on the topics and no commit on any partition
	IdleEmpty     IdleReason = "empty"      // no member on the topics, and commits not seen to move (Watched, Unchanged)
)

// TopicGroup is one group seen on a topic by `groups TOPIC`.
type TopicGroup struct {
	Group     GroupInfo
	Topic     string
	Members   int   // members holding or subscribed to a partition of the topic
	Assigned  int   // partitions of the topic assigned to members
	Committed int   // partitions with a committed offset
	Lag       int64 // over committed partitions whose log end is known
	LagKnown  bool
	Movement  *CommitMovement // from stored samples; nil without history
	Spark     bool            // named like Spark's generated spark-kafka-source-* groups
	Active    bool            // members on the topic, or commits that advanced
	ActiveBy  Activity        // what made it active; "" when it is not
}

// Activity is what makes a group active on a topic; the values it rests on are the
// TopicGroup's own.
type Activity string

// The activities.
const (
	ActiveMembers Activity = "members" // Members on the topic, in a live state (Group.State neither Empty nor Dead)
	ActiveCommits Activity = "commits" // commits advanced over the stored samples (Movement)
)

// GroupsReport answers `groups TOPIC`.
type GroupsReport struct {
	Cluster     string
	Topic       string
	At          time.Time
	Partitions  int
	LogEndSum   int64
	Groups      []TopicGroup // active first, then by lag
	Unavailable []Unavailable
	Elapsed     time.Duration
}
