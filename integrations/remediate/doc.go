// Package remediate repairs a Spark Structured Streaming checkpoint safely: it takes a verified
// backup first, plans the smallest set of files to move aside, and moves them into the backup
// instead of deleting them.
//
// # Backups
//
// Backup copies every file under the checkpoint root except the probe directory
// (_streamwatch_probe) to
//
//	<backup root>/<pipeline>/<UTC time, 20261130T104105Z>/
//	    metadata, offsets/, commits/, sources/, state/, ...   the copy, same relative paths
//	    manifest.json     each path, size and SHA-256; the source location; created time;
//	                      the file count and total bytes
//	    verified.json     written only after every copy was re-read and matched the manifest
//	    quarantine/<path> files that Quarantine moved out of the checkpoint
//	    quarantine.json   the quarantine's manifest: each moved file's path, size, SHA-256,
//	                      when it was moved and when Restore put it back
//
// A second backup in the same second gets the suffix -2, -3, ... The names manifest.json,
// verified.json, quarantine.json and quarantine are reserved: Backup refuses a checkpoint whose root holds one
// of them (Spark never writes them). A backup of a running query is a file-by-file copy, not a
// snapshot; the manifest describes the bytes that were copied. LatestBackup returns the newest
// backup whose verified.json matches its manifest.json.
//
// # The repair plan
//
// PlanRepair reads the listings of the root, offsets/ and commits/ and only the few files
// Spark reads on restart. Let C be the newest batch whose commits/C parses (-1 when none). The
// plan holds exactly:
//
//  1. Corrupt trailing commits: every commits/N with N > C. By the definition of C these are the
//     run of commit files, from the newest down, that Spark cannot parse (empty, no or a bad
//     version line, truncated or unparseable JSON). Spark refuses to start on them and does not
//     fall back; without commits/N it re-runs batch N into the sink (a note says so).
//  2. Corrupt trailing offsets: scanning offsets/ from the newest file down, every offsets/N
//     with N > C that is corrupt in the same ways, or has fewer source lines than offsets/C,
//     up to the first one that parses. A valid offsets/N > C (planned but not committed, the
//     normal state of a running or crashed batch) ends the run and is kept: Spark re-runs it.
//  3. If the corrupt run of either log is longer than 3 files, neither log contributes files
//     (a note says why): that is not an interrupted write, and rolling back that far is a
//     decision for a person with a backup, not for this plan.
//  4. Checksums: the .N.crc beside every file of 1 and 2; and in offsets/ and commits/ an orphan
//     .N.crc (no N beside it) for a batch id above the newest batch kept in that log, older than
//     TempFileMinAge: Spark will write N again and the stray checksum would make that fail.
//  5. Temp files of interrupted atomic writes, .<name>.<uuid>[.TID<n>].tmp, and their .crc, in
//     the root, offsets/ and commits/, older than TempFileMinAge. Younger ones are noted (a
//     write may be in progress: is the query running?).
//
// Never in a plan: metadata; anything under sources/, state/ or the probe directory; in
// offsets/ and commits/ any batch at or below C (committed history), a valid offsets file, and
// names that are not batch ids, checksums or temp files. A corrupt file in committed history
// (seen as an empty file in a listing, or as offsets/C, offsets/<L-1> or metadata failing to
// parse, where L is the newest offsets file kept) is reported in Plan.Remarks, not quarantined:
// moving it would make Spark re-run or skip committed batches; restore it from a backup.
//
// # Quarantine
//
// Quarantine re-checks every planned file (still there, same size, same SHA-256) and plans
// again at the plan's clock, refusing any file the fresh plan does not hold the same (an
// outdated or hand-made plan), before it moves any. Then, checksums first, it copies each file
// to <backup>/quarantine/<path>, re-reads the copy and compares its SHA-256, and only then
// deletes the original. Checkpoint and backup are different stores, so a move is always copy,
// verify, delete; a backup that is not verified, or is of another location, is refused.
//
// # Restore
//
// PlanRestore lists the files of a backup's quarantine that can go back: each copy must match
// quarantine.json (or, for a file quarantined before the record existed, the backup's
// manifest.json), and nothing may stand at its place in the checkpoint: a restore never
// overwrites. Restore checks each file again, copies it back (data files before checksums),
// verifies the copy's SHA-256 and only then removes it from the quarantine.
//
// # Confirmations
//
// A dry run is shown to a person who confirms it later. FileState, Observe, Digest and Diff
// bind a confirmation to what was shown: the exact files (path, size, modification time or
// S3 ETag, SHA-256), re-read at confirmation and compared. RecentActivity says whether a query
// still writes the checkpoint.
//
// # Words
//
// Why a file is planned (PlanFile.Cause), a plan's remarks, why a quarantined file stays
// (Stay), a backup's state and a file's change since a dry run (FileChange) are codes with
// the values they need: commands/render_plan.go and render_repair.go word them
// (TestNoSentencesInRemediate). Plans are stored between dry run and confirmation; one an
// earlier version stored keeps its words in PlanFile.Reason, Plan.Notes and
// RestorePlan.Problems, and commands shows them as they are. Errors keep their text.
//
// The package imports neither Slack, Redis nor the config package.
package remediate
