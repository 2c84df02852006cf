package driverlog

import "testing"

const (
	awsKeyID  = "AKIAIOSFODNN7EXAMPLE"
	awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	jwt       = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)

func TestRedact(t *testing.T) {
	tests := []struct{ name, in, want string }{
		// key=value and its relatives
		{"password=", "connect password=hunter2 retry", "connect password=*** retry"},
		{"spaced key", "db.password = hunter2", "db.password = ***"},
		{"quoted yaml", `ssl.keystore.password: "s3cr3t!"`, `ssl.keystore.password: "***"`},
		{"secret=", "client_secret=abc123def&grant=x", "client_secret=***&grant=x"},
		{"short secret", "secret=ab", "secret=**"},
		{"token=", "GET /hook?token=abc123&x=1", "GET /hook?token=***&x=1"},
		{"access_token", "access_token=ya29.a0AfH6SMBx", "access_token=***"},
		{"json", `{"password":"hunter2","user":"bob"}`, `{"password":"***","user":"bob"}`},
		{"json spaced", `{"api_key": "k-123456"}`, `{"api_key": "***"}`},
		{"scala map", "Map(kafka.ssl.key.password -> k3yp4ss, subscribe -> client.replies.sms)", "Map(kafka.ssl.key.password -> ***, subscribe -> client.replies.sms)"},
		{"sasl.jaas.config", `kafka.sasl.jaas.config -> org.apache.kafka.common.security.scram.ScramLoginModule required username="sms-replies" password="Zq8vR2pLx7";`,
			`kafka.sasl.jaas.config -> org.apache.kafka.common.security.scram.ScramLoginModule required username="sms-replies" password="***";`},
		{"sasl.jaas.config json-escaped", `"kafka.sasl.jaas.config":"org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p4ss-w0rd\";"`,
			`"kafka.sasl.jaas.config":"org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"***\";"`},
		{"sasl.jaas.config bare", "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=p4ss;", "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=***;"},
		{"presigned url", "GET https://b.s3.amazonaws.com/k?X-Amz-Signature=4a5b6c7d8e&X-Amz-Security-Token=FQoGZXIvYXdz", "GET https://b.s3.amazonaws.com/k?X-Amz-Signature=***&X-Amz-Security-Token=***"},
		// headers and tokens
		{"bearer header", "Authorization: Bearer abcdef0123456789", "Authorization: Bearer ***"},
		{"basic header", "authorization=Basic dXNlcjpwYXNz", "authorization=Basic ***"},
		{"header in json", `{"Authorization":"Bearer abc.def.ghijkl"}`, `{"Authorization":"Bearer ***"}`},
		{"bare bearer", "sent with Bearer 0123456789abcdef to the hook", "sent with Bearer *** to the hook"},
		{"aws key id", "fs.s3a.access.key=" + awsKeyID, "fs.s3a.access.key=AKIA***"},
		{"aws session key id", "using ASIAY34FZKBOKMUTVV7A from the environment", "using ASIA*** from the environment"},
		{"aws secret after label", "aws_secret_access_key " + awsSecret + " loaded", "aws_secret_access_key *** loaded"},
		{"aws secret json", `"SecretAccessKey": "` + awsSecret + `"`, `"SecretAccessKey": "***"`},
		{"aws secret hadoop", "spark.hadoop.fs.s3a.secret.key=" + awsSecret, "spark.hadoop.fs.s3a.secret.key=***"},
		{"slack bot token", "token xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx rejected", "token xoxb-*** rejected"},
		{"slack app token", "SLACK_APP_TOKEN is xapp-1-A0123456789-1234567890123-abcdef0123456789", "SLACK_APP_TOKEN is xapp-***"},
		{"jwt", "jwt " + jwt + " expired", "jwt *** expired"},
		// URLs with userinfo: the user stays
		{"jdbc url", "jdbc:postgresql://replies:Pg-p4ss@db.internal:5432/sms", "jdbc:postgresql://replies:***@db.internal:5432/sms"},
		{"s3a url with keys", "s3a://" + awsKeyID + ":wJalrXUtnFEMI%2FK7MDENG@bucket/chk", "s3a://AKIA***:***@bucket/chk"},
		{"password only", "redis://:r3dispass@redis:6379/0", "redis://:***@redis:6379/0"},
		{"short password", "https://user:pw@host/x", "https://user:**@host/x"},
		// already masked, and ordinary text
		{"masked", "password=*** token: ***", "password=*** token: ***"},
		{"kafka hidden", "sasl.jaas.config = [hidden]", "sasl.jaas.config = [hidden]"},
		{"kafka null", "ssl.truststore.password = null", "ssl.truststore.password = null"},
		{"progress", "26/11/30 10:41:05 INFO MicroBatchExecution: Committed offsets for batch 42. Metadata OffsetSeqMetadata(0,1764489612000,HashMap(spark.sql.shuffle.partitions -> 16))", ""},
		{"exception", "java.util.ConcurrentModificationException: Multiple streaming queries are concurrently using file:/var/lib/spark/checkpoints/sms-replies/offsets", ""},
		{"checkpoint url", "Use s3a://sms-checkpoints/sms-replies to store the query checkpoint.", ""},
		{"host and port", "Stopped Spark web UI at http://driver-1.internal:4040", ""},
		{"hdfs permission", `Permission denied: user=spark, access=WRITE, inode="/checkpoints/sms-replies/offsets":hdfs:supergroup:drwxr-xr-x`, ""},
		{"tokens in prose", "Token renewal is not configured; delegation tokens are disabled", ""},
		{"secret in prose", "the secret to a healthy checkpoint is a single writer", ""},
		{"short bearer", "the bearer of bad news", ""},
		{"not a key id", "AKIA is how key ids start; AKIAshort is not one", ""},
		{"unicode", "état: ok — ünïcode ✓", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if want == "" {
				want = tt.in
			}
			got := Redact(tt.in)
			if got != want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, want)
			}
			if again := Redact(got); again != got {
				t.Errorf("Redact is not idempotent: %q -> %q", got, again)
			}
			if got := redactAll(tt.in); got != want {
				t.Errorf("without hints: %q", got)
			}
		})
	}
}

// redactAll applies every rule without the hint pre-check; Redact must
// give the same answer.
func redactAll(line string) string {
	for _, r := range redactions {
		line = r.apply(line)
	}
	return line
}
