package driverlog

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// signatureSamples are log lines each signature must match, at least one per
// alternative of its pattern, quoting Spark, Hadoop, the JDK and the AWS SDKs.
var signatureSamples = map[string][]string{
	"CONCURRENT_QUERY": {
		"java.util.ConcurrentModificationException: Concurrent update to the log. Multiple streaming jobs detected for 44",
		"org.apache.spark.SparkConcurrentModificationException: [CONCURRENT_STREAM_LOG_UPDATE] Concurrent update to the log. Multiple streaming jobs detected for 44.",
		"java.util.ConcurrentModificationException: Multiple streaming queries are concurrently using file:/chk/offsets",
		"org.apache.spark.SparkConcurrentModificationException: [CONCURRENT_QUERY] Another instance of this query was just started by a concurrent session. SQLSTATE: 0A000",
		"java.lang.IllegalStateException: Cannot start query with id 8f5c2a6e as another query with same id is already active. Perhaps you are attempting to restart a query from checkpoint that is already active.",
		"java.util.ConcurrentModificationException: rename of s3a://b/checkpoints/q/commits/7 raced",
		"Caused by: org.apache.hadoop.fs.FileAlreadyExistsException: rename destination hdfs://nn/chk/offsets/44 already exists.",
		"Caused by: java.nio.file.FileAlreadyExistsException: /var/lib/spark/checkpoints/q/commits/57",
		"org.apache.hadoop.fs.FileAlreadyExistsException: Failed to rename temp file /chk/offsets/.44.0c2b.tmp to /chk/offsets/44 because file exists",
		"Failed to rename /chk/offsets/.44.0c2b.tmp to /chk/offsets/44 as destination already exists",
	},
	"PERMISSION_DENIED": {
		"java.nio.file.AccessDeniedException: /var/lib/spark/checkpoints/q/offsets/.44.tmp",
		`org.apache.hadoop.security.AccessControlException: Permission denied: user=spark, access=WRITE, inode="/chk/offsets"`,
		`Caused by: org.apache.hadoop.ipc.RemoteException(org.apache.hadoop.security.AccessControlException): Permission denied: user=spark, access=WRITE`,
		"java.io.FileNotFoundException: /var/lib/spark/checkpoints/q/state/0/3/.58.delta.tmp (Permission denied)",
		"com.amazonaws.services.s3.model.AmazonS3Exception: Access Denied (Service: Amazon S3; Status Code: 403; Error Code: AccessDenied; Request ID: 7QJ1)",
		"software.amazon.awssdk.services.s3.model.S3Exception: Access Denied (Service: S3, Status Code: 403, Request ID: 7QJ1)",
		"getFileStatus on s3a://b/chk/offsets/58: 403 Forbidden",
	},
	"CHECKPOINT_WRITE_FAILED": {
		"java.io.IOException: Failed to rename temp file s3a://b/chk/commits/.57.a1b2.tmp to s3a://b/chk/commits/57 as rename returned false",
		"WARN CheckpointFileManager: Error cancelling write to file:/chk/offsets/44, continuing to delete temp path file:/chk/offsets/.44.tmp",
		"WARN CheckpointFileManager: Error deleting temp file file:/chk/offsets/.44.tmp",
		`java.io.IOException: Error writing stream metadata StreamMetadata(8f5c) to file:/chk/metadata`,
		"org.apache.spark.SparkException: [CANNOT_WRITE_STATE_STORE.CANNOT_COMMIT] Error writing state store files for provider HDFSStateStoreProvider[id = (op=0,part=3)].",
		"java.io.IOException: Fail to write state metadata file to file:/chk/state/0/_metadata/metadata",
	},
	"STORAGE_FULL": {
		"java.io.IOException: No space left on device",
		"org.apache.hadoop.hdfs.protocol.DSQuotaExceededException: The DiskSpace quota of /checkpoints is exceeded: quota = 1073741824 B = 1 GB but diskspace consumed = 1074000000 B",
		"org.apache.hadoop.hdfs.protocol.NSQuotaExceededException: The NameSpace quota (directories and files) of directory /checkpoints is exceeded: quota=100000 file count=100001",
	},
	"STATE_LOAD_FAILED": {
		"java.lang.IllegalStateException: Error reading delta file file:/chk/state/0/1/57.delta of HDFSStateStoreProvider[id = (op=0,part=1)]: file:/chk/state/0/1/57.delta does not exist",
		"java.lang.IllegalStateException: Error reading snapshot file file:/chk/state/0/1/50.snapshot of HDFSStateStoreProvider[id = (op=0,part=1)]: file:/chk/state/0/1/50.snapshot does not exist",
		"Error reading streaming state file of file:/chk/state/0/1/57.delta does not exist. If the stream job is restarted with a new or updated state operation, please create a new checkpoint location or clear the existing checkpoint location.",
		"org.apache.spark.SparkException: [CANNOT_LOAD_STATE_STORE.UNCATEGORIZED] An error occurred during loading state. SQLSTATE: 58030",
		"org.apache.spark.SparkException: [CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS] Cannot read 57.delta",
		"java.lang.IllegalStateException: Cannot read RocksDB checkpoint metadata. Expected 1, but found 2.",
		"Cannot find a base snapshot checkpoint with lineage: [(57,abc)].",
		"The change log reader version cannot be 5. The checkpoint probably is from a future Spark version, please upgrade your Spark.",
		"Could not load RocksDB state store with id StateStoreId(/chk/state,0,3,default) because of an out of memory exception.",
		"java.lang.IllegalStateException: Copied /chk/state/0/3/SSTs/000012-ab.sst to /tmp/rocksdb/000012.sst, expected 4096 bytes, found 1024 bytes.",
	},
	"CHECKPOINT_LOG_CORRUPT": {
		"java.lang.IllegalStateException: Incomplete log file",
		"java.lang.IllegalStateException: Incomplete log file in the offset commit log",
		"java.lang.IllegalStateException: Failed to read log file /chk/offsets/44. Unexpected end of input",
		"java.lang.IllegalStateException: failed to read log file for batch 44",
		"java.lang.IllegalStateException: Log file was malformed: failed to read correct log version from .",
		"org.apache.spark.SparkIllegalStateException: [MALFORMED_LOG_FILE] Log file was malformed: failed to read correct log version from x.",
		"java.lang.IllegalStateException: UnsupportedLogVersion: maximum supported log version is v1, but encountered v2. The log file was produced by a newer version of Spark and cannot be read by this version. Please upgrade.",
		"ERROR StreamMetadata: Error reading stream metadata from file:/chk/metadata",
		`java.lang.IllegalArgumentException: Expected e.g. {"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}, got {"client.replies.sms":{"0":`,
	},
	"BATCHES_MISSING": {
		"java.lang.IllegalStateException: batch 56 doesn't exist",
		"java.lang.IllegalStateException: batches (41, 42) don't exist (startId: 40, endId: 44)",
		"java.lang.IllegalStateException: Unable to find batch file:/chk/offsets/56",
		"org.apache.spark.SparkRuntimeException: [BATCH_METADATA_NOT_FOUND] Unable to find batch file:/chk/offsets/56.",
	},
	"SOURCES_CHANGED": {
		"java.lang.IllegalArgumentException: requirement failed: There are [1] sources in the checkpoint offsets and now there are [2] sources requested by the query. Cannot continue.",
	},
	"QUERY_TERMINATED": {
		"ERROR MicroBatchExecution: Query sms-replies [id = 8f5c, runId = 2c1f] terminated with error",
		"org.apache.spark.sql.streaming.StreamingQueryException: [STREAM_FAILED] Query [id = 8f5c, runId = 2c1f] terminated with exception: batch 56 doesn't exist",
		"org.apache.spark.sql.streaming.StreamingQueryException: Query sms-replies [id = 8f5c, runId = 2c1f] terminated with exception: batch 56 doesn't exist",
	},
	"KAFKA_DATA_LOSS": {
		"Some data may have been lost because they are not available in Kafka any more; either the data was aged out by Kafka or the topic may have been deleted",
		"org.apache.spark.SparkException: [KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED] Partition client.replies.sms-2 offset was changed from 1057 to 12.",
		"WARN KafkaOffsetReaderAdmin: Partition client.replies.sms-2's offset was changed from 1057 to 12, some data may have been missed.",
		"java.lang.IllegalStateException: Cannot find initial offsets for partitions [client.replies.sms-3]. They may have been deleted.",
	},
	"STALE_STATE_RECONSTRUCTION": {
		"WARN HDFSBackedStateStoreProvider: The state for version 57 doesn't exist in loadedMaps. Reading snapshot file and delta files if needed...Note that this is normal for the first batch of starting query.",
	},
	"STATE_MAINTENANCE_FAILED": {
		"WARN HDFSBackedStateStoreProvider: Error performing snapshot and cleaning up HDFSStateStoreProvider[id = (op=0,part=3)]",
		"WARN StateStore: Error doing snapshots",
		"WARN HDFSBackedStateStoreProvider: Error cleaning up files for HDFSStateStoreProvider[id = (op=0,part=3)]",
		"WARN HDFSBackedStateStoreProvider: Could not identify file file:/chk/state/0/3/junk for HDFSStateStoreProvider[id = (op=0,part=3)]",
	},
	"LOG_INCONSISTENT": {
		"WARN MicroBatchExecution: Batch completion log latest batch id is 55, which is not trailing batchid 57 by one",
		"INFO MicroBatchExecution: no commit log present",
	},
	"NON_ATOMIC_CHECKPOINT_FS": {
		"WARN CheckpointFileManager: Could not use FileContext API for managing Structured Streaming checkpoint files at s3a://b/chk/offsets. Using FileSystem API instead for managing log files. If the implementation of FileSystem.rename() is not atomic, then the correctness and fault-tolerance ofyour Structured Streaming is not guaranteed.",
	},
	"CONF_FROM_CHECKPOINT": {
		"WARN OffsetSeqMetadata: Updating the value of conf 'spark.sql.shuffle.partitions' in current session from '16' to '200'.",
	},
}

// ordinaryLines are healthy log lines, some close to a signature, that no
// signature may match.
var ordinaryLines = []string{
	"INFO CheckpointFileManager: Writing atomically to file:/chk/offsets/44 using temp file file:/chk/offsets/.44.0c2b.tmp",
	"INFO CheckpointFileManager: Renamed temp file file:/chk/offsets/.44.0c2b.tmp to file:/chk/offsets/44",
	"INFO MicroBatchExecution: Starting new streaming query.",
	"INFO MicroBatchExecution: Resuming at batch 44 with committed offsets {} and available offsets {}",
	"INFO MicroBatchExecution: Committed offsets for batch 44. Metadata OffsetSeqMetadata(0,1764489612000,HashMap())",
	"INFO HDFSBackedStateStoreProvider: Committed version 45 for HDFSStateStore[id=(op=0,part=0),dir=file:/chk/state/0/0] to file file:/chk/state/0/0/45.delta",
	"INFO HDFSBackedStateStoreProvider: Retrieved version 44 of HDFSStateStoreProvider[id = (op=0,part=1)] for update",
	"WARN OffsetSeqMetadata: Conf 'spark.sql.streaming.stateStore.compression.codec' was not found in the offset log, using default value 'lz4'",
	"INFO SecurityManager: SecurityManager: authentication disabled; ui acls disabled; users with view permissions: spark; groups with modify permissions: EMPTY",
	"INFO S3AFileSystem: Opening s3a://sms-checkpoints/sms-replies/offsets/44 for reading",
	"INFO Executor: Finished task 4.0 in stage 57.0 (TID 221). 2863 bytes result sent to driver",
	"INFO DAGScheduler: ResultStage 57 (start at SmsReplies.scala:88) finished in 1.412 s",
	"WARN TaskSetManager: Lost task 3.0 in stage 57.0 (TID 220) (10.0.4.17 executor 2): TaskKilled (another attempt succeeded)",
	"java.util.ConcurrentModificationException",
	"\tat java.util.HashMap$HashIterator.nextNode(HashMap.java:1597)",
}

func TestSignatureTable(t *testing.T) {
	ids := map[string]bool{}
	idForm := regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	for i, sig := range Signatures {
		if !idForm.MatchString(sig.ID) || ids[sig.ID] {
			t.Errorf("signature %d: bad or repeated ID %q", i, sig.ID)
		}
		ids[sig.ID] = true
		if sig.Pattern == nil || sig.Severity < SeverityWarning || sig.Severity > SeverityCritical {
			t.Errorf("%s: incomplete: %+v", sig.ID, sig)
		}
		if i > 0 && sig.Severity > Signatures[i-1].Severity {
			t.Errorf("%s: table not ordered most severe first", sig.ID)
		}
		if patternNeedles(sig.Pattern) == nil {
			t.Errorf("%s: pattern %s has no literal to pre-filter on", sig.ID, sig.Pattern)
		}
		if len(signatureSamples[sig.ID]) == 0 {
			t.Errorf("%s: no sample lines", sig.ID)
		}
	}
	for _, id := range []string{"CHECKPOINT_WRITE_FAILED", "PERMISSION_DENIED", "STALE_STATE_RECONSTRUCTION", "CONCURRENT_QUERY"} {
		if !ids[id] {
			t.Errorf("no %s signature", id)
		}
	}
	for id := range signatureSamples {
		if !ids[id] {
			t.Errorf("samples for unknown signature %s", id)
		}
	}
}

func TestSignatureSamples(t *testing.T) {
	s := newScanner(Options{}, openOSFile)
	for i, sig := range s.sigs {
		for _, line := range signatureSamples[sig.ID] {
			for _, variant := range []string{line, strings.ToUpper(line), strings.ToLower(line)} {
				s.filter.candidates([]byte(variant), s.cand)
				if !isCandidate(s.cand, i) || !sig.Pattern.MatchString(variant) {
					t.Errorf("%s does not match %q", sig.ID, variant)
				}
			}
		}
	}
}

func TestOrdinaryLinesMatchNothing(t *testing.T) {
	for _, line := range ordinaryLines {
		for _, sig := range Signatures {
			if sig.Pattern.MatchString(line) {
				t.Errorf("%s matches ordinary line %q", sig.ID, line)
			}
		}
	}
}

func TestNeedles(t *testing.T) {
	tests := []struct {
		re   string
		want []string
	}{
		{`(?i)abc`, []string{"abc"}},
		{`(?i)(?:Query .* terminated with error)`, []string{" terminated with error"}},
		{`abc|d.*ef`, []string{"abc", "ef"}},
		{`abc|x?`, nil},
		{`(?:ab)+cd`, []string{"ab"}},
		{`\d+`, nil},
	}
	for _, tt := range tests {
		got := patternNeedles(regexp.MustCompile(tt.re))
		if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("needles(%s) = %q, want %q", tt.re, got, tt.want)
		}
	}
}

func TestPrefilter(t *testing.T) {
	patterns := []*regexp.Regexp{
		regexp.MustCompile(`(?i)kafka_data_loss`),
		regexp.MustCompile(`(?i)she|hers`),
		regexp.MustCompile(`\d+`), // no needle: always a candidate
		regexp.MustCompile(`(?i)Query .* terminated with error`),
	}
	p := newPrefilter(patterns)
	tests := []struct {
		line string
		want []int
	}{
		{"", []int{2}},
		{"nothing here", []int{2}},
		{"uSHErs", []int{1, 2}},      // "she" and "hers" overlap: failure links
		{"KAFKA_DATA_LOS", []int{2}}, // a prefix is not a needle
		{"[KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED] Query q terminated with error", []int{0, 2, 3}},
		{"\u212Aafka_data_lo\u017Fs", []int{0, 2}},      // Kelvin sign and long s fold to k and s
		{"kafka_data_lo\u00DFs uSH\u00E9ers", []int{2}}, // other non-ASCII breaks a needle
		{"\xE2\x84 \xC5", []int{2}},                     // truncated sequences
	}
	for _, tt := range tests {
		dst := make([]uint64, p.words)
		p.candidates([]byte(tt.line), dst)
		var got []int
		for i := range patterns {
			if isCandidate(dst, i) {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("candidates(%q) = %v, want %v", tt.line, got, tt.want)
		}
		for i, re := range patterns {
			if re.MatchString(tt.line) && !isCandidate(dst, i) {
				t.Errorf("%s matches %q but is no candidate", re, tt.line)
			}
		}
	}
	// More than 64 patterns take more than one word.
	var many []*regexp.Regexp
	for i := range 70 {
		many = append(many, regexp.MustCompile(fmt.Sprintf("needle%03d", i)))
	}
	p = newPrefilter(many)
	dst := make([]uint64, p.words)
	p.candidates([]byte("a needle069 and a needle003"), dst)
	for i := range many {
		if isCandidate(dst, i) != (i == 3 || i == 69) {
			t.Errorf("pattern %d: %v", i, isCandidate(dst, i))
		}
	}
}
