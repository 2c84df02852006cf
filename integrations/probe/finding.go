package probe

import "time"

// Code says what a probe found: a step's detail (Step.Found) or a part of a result's reason
// (Result.Why). commands/render_probe.go words each with the Finding fields its doc comment
// names.
type Code string

// The step details.
const (
	// CodeDirExists: the location is a directory.
	CodeDirExists Code = "dir_exists"
	// CodeListed: the location's listing (N: its entries; Logs: offsets/ and commits/;
	// NoMetadata: it has no metadata file).
	CodeListed Code = "listed"
	// CodeNoMetadata: no metadata file, which Spark writes anew on restart.
	CodeNoMetadata Code = "no_metadata"
	// CodeQueryID: the metadata's query id (ID).
	CodeQueryID Code = "query_id"
	// CodeNoBatchPlanned: offsets/ holds no batch.
	CodeNoBatchPlanned Code = "no_batch_planned"
	// CodeOffsetsRead: the newest offsets file (Batch; N: its sources; At: when the batch was
	// planned, zero when the file does not say; Age: how long ago).
	CodeOffsetsRead Code = "offsets_read"
	// CodeNoBatchCommitted: commits/ holds no batch.
	CodeNoBatchCommitted Code = "no_batch_committed"
	// CodeCommitRead: the newest commit file (Batch; At: its modification time; Age: how long
	// ago).
	CodeCommitRead Code = "commit_read"
	// CodeWrote: the write test wrote its object (N: bytes, Path: the object).
	CodeWrote Code = "wrote"
	// CodeBytesMatch: the object read back matches (N: bytes).
	CodeBytesMatch Code = "bytes_match"
	// CodeDeleted: the object was deleted (Path).
	CodeDeleted Code = "deleted"
	// CodeCleanup: the delete after a failed read back (Of: CodeDeleted, or the delete's
	// failure).
	CodeCleanup Code = "cleanup"
)

// The failures: a failed step's detail, and the reason of a FAILED result.
const (
	// CodeCorruptFile: a checkpoint file does not parse (Path, Line, Problem).
	CodeCorruptFile Code = "corrupt_file"
	// CodeCancelled: the probe was cancelled during a step (Step, Path).
	CodeCancelled Code = "cancelled"
	// CodeTimedOut: a step timed out (Step, Path).
	CodeTimedOut Code = "timed_out"
	// CodePermissionDenied: the storage refused a step (Step, Path).
	CodePermissionDenied Code = "permission_denied"
	// CodeNotFound: what a step used is gone (Step, Path).
	CodeNotFound Code = "not_found"
	// CodeStepFailed: a step failed otherwise (Step, Path; Cause: the storage error's own
	// message).
	CodeStepFailed Code = "step_failed"
	// CodeCannotOpen: the location cannot be opened (Path: the location; Cause: why).
	CodeCannotOpen Code = "cannot_open"
	// CodeNoLocation: the location does not exist (Path).
	CodeNoLocation Code = "no_location"
	// CodeIsFile: the location is a file (Path).
	CodeIsFile Code = "is_file"
	// CodeNoCheckpointFiles: the location holds no metadata, offsets/ or commits/ (Path).
	CodeNoCheckpointFiles Code = "no_checkpoint_files"
	// CodeBadProbePath: Options.Path cannot be used (Path: as configured; Cause: why).
	CodeBadProbePath Code = "bad_probe_path"
	// CodeNoProbeName: the probe object could not be named (Cause: the random source's
	// error).
	CodeNoProbeName Code = "no_probe_name"
	// CodeReadBackDiffers: the object read back is not what was written (Path).
	CodeReadBackDiffers Code = "read_back_differs"
	// CodeCrashed: the probe panicked (Path: the location; Cause: the panic's value).
	CodeCrashed Code = "crashed"
	// CodeAccessRefused: the read-only access check says the job's user may not write; the
	// words are Result.Access's.
	CodeAccessRefused Code = "access_refused"
)

// The reasons of an OK or DEGRADED result.
const (
	// CodeHealthy: every step passed (Path: the checkpoint; Write: the write test ran;
	// Committed: a commit was read, Age: its age).
	CodeHealthy Code = "healthy"
	// CodeStale: the newest commit is older than the threshold (Batch, Age; After: the
	// threshold).
	CodeStale Code = "stale"
	// CodeNeverCommitted: no batch has been committed (After: the stale threshold).
	CodeNeverCommitted Code = "never_committed"
	// CodeSlow: steps took longer than the threshold (Slow: those steps; After: the
	// threshold).
	CodeSlow Code = "slow"
)

// Finding is what a step found or why a result is what it is, as a code and the values its
// words need.
type Finding struct {
	Code    Code          `json:"code"`
	Step    string        `json:"step,omitempty"` // the step's name (Step*)
	Path    string        `json:"path,omitempty"` // the full path or URL of what the step used
	Line    int           `json:"line,omitempty"`
	Problem string        `json:"problem,omitempty"`
	Cause   string        `json:"cause,omitempty"` // an error's message
	ID      string        `json:"id,omitempty"`
	N       int           `json:"n,omitempty"`
	Batch   int64         `json:"batch,omitempty"`
	At      time.Time     `json:"at,omitzero"`
	Age     time.Duration `json:"age,omitempty"`
	After   time.Duration `json:"after,omitempty"`
	Write   bool          `json:"write,omitempty"`
	// Committed: CodeHealthy.
	Committed bool `json:"committed,omitempty"`
	// NoMetadata, Logs: CodeListed.
	NoMetadata bool     `json:"no_metadata,omitempty"`
	Logs       []LogDir `json:"logs,omitempty"`
	// Slow: CodeSlow.
	Slow []Timing `json:"slow,omitempty"`
	// Of: CodeCleanup.
	Of *Finding `json:"of,omitempty"`
}

// LogDir is what the list step found of offsets/ or commits/.
type LogDir struct {
	Dir     string `json:"dir"`               // "offsets" or "commits"
	Present bool   `json:"present,omitempty"` // false: absent
	Files   int    `json:"files,omitempty"`   // batch files; 0: empty
	First   int64  `json:"first,omitempty"`
	Last    int64  `json:"last,omitempty"`
}

// Timing is how long a step took.
type Timing struct {
	Step string        `json:"step"`
	Took time.Duration `json:"took"`
}

// RefusedByAccess says whether the result failed because the read-only access check judged
// the location not writable (by its code; for an earlier version's result, by its words).
func (r *Result) RefusedByAccess() bool {
	if !r.Access.Judged() || r.Access.Writable {
		return false
	}
	if len(r.Why) > 0 {
		return r.Why[0].Code == CodeAccessRefused
	}
	return r.Reason != "" && r.Reason == r.Access.Reason
}
