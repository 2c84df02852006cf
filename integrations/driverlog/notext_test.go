package driverlog

import (
	"testing"

	"github.com/streamwatch/streamwatch/internal/notext"
)

// TestNoSentencesInDriverlog: driverlog returns codes and fields (a match's signature ID, a
// Skip) that commands/render_logs.go words (issue 29); its code makes no sentence outside
// errors, apart from the literals below, which are the text of the logs it reads.
func TestNoSentencesInDriverlog(t *testing.T) {
	kept := map[string]string{
		"Streaming query made progress:":                         "Spark's progress line, which heartbeat.go looks for",
		"Streaming query has been idle and waiting for new data": "Spark's idle line, which heartbeat.go looks for",
		"Caused by:":           "a Java stack trace's line, which scan.go keeps in its record",
		"Exception in thread ": "a Java exception's first line, which scan.go starts a record at",
		"yy/MM/dd HH:mm:ss":    "the layout of log4j timestamps Spark writes, which timestamp.go reads",
	}
	// Spark's, Hadoop's and the JDK's own messages, which the signatures match (signatures.go).
	for _, s := range []string{
		"Concurrent update to the log. Multiple streaming jobs detected for",
		"Multiple streaming queries are concurrently using",
		"Another instance of this query was just started by a concurrent session",
		"Cannot start query with id ",
		" as another query with same id is already active",
		"Failed to rename temp file ",
		" because file exists",
		"Failed to rename ",
		" as destination already exists",
		"org.apache.hadoop.security.AccessControlException: Permission denied",
		"AccessControlException): Permission denied",
		" (Permission denied)",
		"Error Code: AccessDenied",
		"Access Denied",
		"Status Code: 403",
		" as rename returned false",
		"Error cancelling write to ",
		"Error deleting temp file ",
		"Error writing stream metadata ",
		"Error writing state store files for provider",
		"Fail to write state metadata file to ",
		"No space left on device",
		"Error reading delta file ",
		"Error reading snapshot file ",
		"Error reading streaming state file of ",
		"An error occurred during loading state.",
		"Cannot read RocksDB checkpoint metadata.",
		"Cannot find a base snapshot checkpoint with lineage",
		"The change log reader version cannot be ",
		"Could not load RocksDB state store with id ",
		"Incomplete log file",
		"Failed to read log file ",
		"Log file was malformed: failed to read correct log version from ",
		"UnsupportedLogVersion: maximum supported log version is v",
		"Error reading stream metadata from ",
		"Unable to find batch ",
		"There are [",
		"] sources in the checkpoint offsets and now there are [",
		"] sources requested by the query. Cannot continue.",
		" terminated with error",
		" terminated with exception: ",
		"Some data may have been lost because they are not available in Kafka any more",
		"offset was changed from ",
		", some data may have been missed",
		"Cannot find initial offsets for partitions ",
		"The state for version ",
		" doesn't exist in loadedMaps. Reading snapshot file and delta files if needed",
		"Error performing snapshot and cleaning up",
		"Error doing snapshots",
		"Error cleaning up files",
		"Could not identify file ",
		"Batch completion log latest batch id is ",
		", which is not trailing batchid ",
		" by one",
		"no commit log present",
		"Could not use FileContext API for managing Structured Streaming checkpoint files at ",
		"Updating the value of conf '",
		"' in current session from '",
	} {
		kept[s] = "log text a signature matches"
	}
	notext.Check(t, ".", 10, kept)
}
