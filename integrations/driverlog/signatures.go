package driverlog

import (
	"regexp"
	"strings"
)

// Severity ranks signatures for on-call: Matches are sorted most severe first.
type Severity int

// Severities, least severe first. The zero value sorts below all of them.
const (
	SeverityWarning  Severity = iota + 1 // worth a look; the query may still be running
	SeverityError                        // data or progress is affected
	SeverityCritical                     // the query is failing or cannot restart on this checkpoint
)

func (s Severity) String() string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityError:
		return "error"
	case SeverityCritical:
		return "critical"
	}
	return "unknown"
}

// Signature is one kind of checkpoint trouble and the log text that reveals it. Its title and
// what it means for on-call are worded in commands (render_logs.go), keyed by ID.
type Signature struct {
	ID       string // stable, upper snake case: CHECKPOINT_WRITE_FAILED
	Severity Severity
	// Pattern is matched against each line of a log record. It should be
	// anchored on literal text: Scan skips the regular expression on lines
	// that contain none of the literals every match needs.
	Pattern *regexp.Regexp
}

// lit quotes a string exactly as Spark, Hadoop or the JDK writes it.
func lit(s string) string { return regexp.QuoteMeta(s) }

// anyOf compiles the alternatives case-insensitively: class names and
// messages are matched whatever the case a wrapper printed them in.
func anyOf(alternatives ...string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:` + strings.Join(alternatives, `|`) + `)`)
}

// Signatures is the table Scan matches, most severe first. The strings come
// from §9 of docs/spark-checkpoint-format.md (Spark 3.0 to 4.1) and,
// for permissions and full disks, from the JDK, Hadoop and the AWS SDKs.
var Signatures = []Signature{
	{
		ID:       "CONCURRENT_QUERY",
		Severity: SeverityCritical,
		Pattern: anyOf(
			lit(`Concurrent update to the log. Multiple streaming jobs detected for`),
			lit(`CONCURRENT_STREAM_LOG_UPDATE`),
			lit(`Multiple streaming queries are concurrently using`),
			lit(`Another instance of this query was just started by a concurrent session`),
			lit(`Cannot start query with id `)+`.+`+lit(` as another query with same id is already active`),
			lit(`ConcurrentModificationException`)+`.*(?:checkpoint|[/\\](?:offsets|commits|state)\b)`,
			lit(`FileAlreadyExistsException`)+`.*[/\\](?:offsets|commits)[/\\]`,
			lit(`Failed to rename temp file `)+`.+`+lit(` because file exists`),
			lit(`Failed to rename `)+`.+`+lit(` as destination already exists`),
		),
	},
	{
		ID:       "PERMISSION_DENIED",
		Severity: SeverityCritical,
		Pattern: anyOf(
			lit(`java.nio.file.AccessDeniedException`),
			lit(`org.apache.hadoop.security.AccessControlException: Permission denied`),
			lit(`AccessControlException): Permission denied`), // wrapped in org.apache.hadoop.ipc.RemoteException(...)
			lit(`FileNotFoundException: `)+`.+`+lit(` (Permission denied)`),
			`(?:AmazonS3Exception|S3Exception|s3a?://).*(?:`+lit(`Error Code: AccessDenied`)+`|`+lit(`Access Denied`)+`|`+lit(`Status Code: 403`)+`|`+lit(`403 Forbidden`)+`)`,
		),
	},
	{
		ID:       "CHECKPOINT_WRITE_FAILED",
		Severity: SeverityCritical,
		Pattern: anyOf(
			lit(`Failed to rename temp file `)+`.+`+lit(` as rename returned false`),
			lit(`Error cancelling write to `),
			lit(`Error deleting temp file `),
			lit(`Error writing stream metadata `),
			lit(`Error writing state store files for provider`),
			lit(`CANNOT_WRITE_STATE_STORE`),
			lit(`Fail to write state metadata file to `),
		),
	},
	{
		ID:       "STORAGE_FULL",
		Severity: SeverityCritical,
		Pattern: anyOf(
			lit(`No space left on device`),
			lit(`DSQuotaExceededException`),
			lit(`NSQuotaExceededException`),
		),
	},
	{
		ID:       "STATE_LOAD_FAILED",
		Severity: SeverityCritical,
		Pattern: anyOf(
			lit(`Error reading delta file `),
			lit(`Error reading snapshot file `),
			lit(`Error reading streaming state file of `),
			lit(`An error occurred during loading state.`),
			lit(`CANNOT_LOAD_STATE_STORE`),
			lit(`Cannot read RocksDB checkpoint metadata.`),
			lit(`Cannot find a base snapshot checkpoint with lineage`),
			lit(`The change log reader version cannot be `),
			lit(`Could not load RocksDB state store with id `),
			lit(`Copied `)+`.+`+lit(` to `)+`.+`+lit(`, expected `)+`\d+`+lit(` bytes, found `)+`\d+`+lit(` bytes.`),
		),
	},
	{
		ID:       "CHECKPOINT_LOG_CORRUPT",
		Severity: SeverityCritical,
		Pattern: anyOf(
			lit(`Incomplete log file`),
			lit(`Failed to read log file `), // also "failed to read log file for batch <N>"
			lit(`Log file was malformed: failed to read correct log version from `),
			lit(`MALFORMED_LOG_FILE`),
			lit(`UnsupportedLogVersion: maximum supported log version is v`),
			lit(`Error reading stream metadata from `),
			lit(`Expected e.g. {"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}, got `),
		),
	},
	{
		ID:       "BATCHES_MISSING",
		Severity: SeverityCritical,
		Pattern: anyOf(
			lit(`batch `)+`\d+`+lit(` doesn't exist`),
			lit(`batches (`)+`.*`+lit(`) don't exist`),
			lit(`Unable to find batch `),
			lit(`BATCH_METADATA_NOT_FOUND`),
		),
	},
	{
		ID:       "SOURCES_CHANGED",
		Severity: SeverityCritical,
		Pattern: anyOf(
			lit(`There are [`) + `\d+` + lit(`] sources in the checkpoint offsets and now there are [`) + `\d+` + lit(`] sources requested by the query. Cannot continue.`),
		),
	},
	{
		ID:       "QUERY_TERMINATED",
		Severity: SeverityCritical,
		Pattern: anyOf(
			lit(`Query `)+`.*`+lit(` terminated with error`),
			lit(`[STREAM_FAILED]`),
			lit(`Query `)+`.*`+lit(` terminated with exception: `),
		),
	},
	{
		ID:       "KAFKA_DATA_LOSS",
		Severity: SeverityError,
		Pattern: anyOf(
			lit(`Some data may have been lost because they are not available in Kafka any more`),
			lit(`KAFKA_DATA_LOSS`),
			lit(`offset was changed from `)+`.+`+lit(`, some data may have been missed`),
			lit(`Cannot find initial offsets for partitions `),
		),
	},
	{
		ID:       "STALE_STATE_RECONSTRUCTION",
		Severity: SeverityWarning,
		Pattern: anyOf(
			lit(`The state for version `) + `\d+` + lit(` doesn't exist in loadedMaps. Reading snapshot file and delta files if needed`),
		),
	},
	{
		ID:       "STATE_MAINTENANCE_FAILED",
		Severity: SeverityWarning,
		Pattern: anyOf(
			lit(`Error performing snapshot and cleaning up`),
			lit(`Error doing snapshots`),
			lit(`Error cleaning up files`),
			lit(`Could not identify file `),
		),
	},
	{
		ID:       "LOG_INCONSISTENT",
		Severity: SeverityWarning,
		Pattern: anyOf(
			lit(`Batch completion log latest batch id is `)+`\d+`+lit(`, which is not trailing batchid `)+`\d+`+lit(` by one`),
			lit(`no commit log present`),
		),
	},
	{
		ID:       "NON_ATOMIC_CHECKPOINT_FS",
		Severity: SeverityWarning,
		Pattern: anyOf(
			// Spark's sentence has a missing space after this: match the prefix.
			lit(`Could not use FileContext API for managing Structured Streaming checkpoint files at `),
		),
	},
	{
		ID:       "CONF_FROM_CHECKPOINT",
		Severity: SeverityWarning,
		Pattern: anyOf(
			lit(`Updating the value of conf '`) + `.+` + lit(`' in current session from '`),
		),
	},
}
