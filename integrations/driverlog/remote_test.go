package driverlog

import (
	"bytes"
	"compress/gzip"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamwatch/streamwatch/integrations/storage/storagetest"
)

// TestScanObjectStorePrefix: driver logs under an s3://, gs:// or abfss:// prefix, rolled and
// gzip'd as EMR, Dataproc, Databricks and HDInsight deliver them, give the same findings
// (signatures, counts, first and last times, redacted examples) as the same lines in local
// files, rolled files oldest first, within max_bytes per file, whether the location is a glob
// or a bare prefix.
func TestScanObjectStorePrefix(t *testing.T) {
	t.Parallel()
	for _, be := range storagetest.ObjectStores() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			// stderr.2.gz and stderr.1.gz are rolled, stderr is the active log.
			rolled := []struct{ src, name string }{
				{"driver-concurrent.log", "stderr.2"},
				{"driver-state.log", "stderr.1"},
				{"driver-permission.log", "stderr"},
			}
			local, upload := t.TempDir(), t.TempDir()
			uploaded := map[string]string{} // local name -> uploaded file
			for i, f := range rolled {
				data, err := os.ReadFile(filepath.Join("testdata", f.src))
				if err != nil {
					t.Fatal(err)
				}
				mod := testNow.Add(time.Duration(i-10) * time.Minute)
				setModTime(t, writeFile(t, local, f.name, string(data)), mod)
				name := f.name
				if i < len(rolled)-1 {
					var gz bytes.Buffer
					zw := gzip.NewWriter(&gz)
					zw.Write(data)
					zw.Close()
					data, name = gz.Bytes(), name+".gz"
				}
				uploaded[f.name] = writeFile(t, upload, name, string(data))
				setModTime(t, uploaded[f.name], mod)
			}
			srv := be.Start(t, "driver-logs")
			storagetest.UploadInOrder(t, srv, upload, "cluster-logs/0101-abc/driver")
			// The objects' times (which Azure stamps itself) become the local files' too.
			for name, up := range uploaded {
				info, err := os.Stat(up)
				if err != nil {
					t.Fatal(err)
				}
				setModTime(t, filepath.Join(local, name), info.ModTime())
			}
			now := func() time.Time { return testNow }
			if be.StampsTimes { // the logs are as old as the upload
				now = func() time.Time { return time.Now().Add(time.Minute) }
			}

			for _, maxBytes := range []int64{DefaultMaxBytes, 3000} { // 3000: only each file's tail
				opt := testOptions(filepath.Join(local, "stderr*"))
				opt.MaxBytes, opt.Now = maxBytes, now
				want, err := Scan(t.Context(), opt)
				if err != nil || len(want.Matches) < 3 || len(want.Errors) > 0 {
					t.Fatalf("local scan: %+v, %v", want, err)
				}
				for _, pattern := range []string{
					srv.Location("cluster-logs/0101-abc/driver/stderr*"),
					srv.Location("cluster-logs/0101-abc/driver/"),
				} {
					opt := testOptions(pattern)
					opt.MaxBytes, opt.Now, opt.Storage = maxBytes, now, srv.Options()
					got, err := Scan(t.Context(), opt)
					if err != nil || len(got.Errors) > 0 {
						t.Fatalf("scan %s: %v, errors %q", pattern, err, got.Errors)
					}
					if len(got.Files) != len(rolled) || !strings.HasSuffix(got.Files[0].Path, "/stderr.2.gz") || !strings.HasSuffix(got.Files[2].Path, "/stderr") {
						t.Errorf("scan %s read %+v, want the rolled files oldest first", pattern, got.Files)
					}
					for i, f := range got.Files {
						if w := want.Files[i]; f.BytesRead != w.BytesRead || f.Truncated != w.Truncated || !f.ModTime.Equal(w.ModTime) {
							t.Errorf("scan %s (max %d) read %+v, local %+v", pattern, maxBytes, f, w)
						}
					}
					if len(got.Matches) != len(want.Matches) {
						t.Fatalf("scan %s (max %d): %d matches, local %d", pattern, maxBytes, len(got.Matches), len(want.Matches))
					}
					for i, m := range got.Matches {
						w := want.Matches[i]
						same := m.Signature.ID == w.Signature.ID && m.Count == w.Count && m.First.Equal(w.First) &&
							m.Last.Equal(w.Last) && m.Example == w.Example &&
							strings.TrimSuffix(path.Base(m.File), ".gz") == filepath.Base(w.File)
						if !same {
							t.Errorf("scan %s (max %d) match %d = %+v, local %+v", pattern, maxBytes, i, m, w)
						}
					}
				}
			}
		})
	}
}

// TestLastWriteInObjectStore: the newest object under a log prefix is the driver's last write,
// so that a repair sees a driver still logging to S3 or GCS.
func TestLastWriteInObjectStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	setModTime(t, writeFile(t, dir, "stderr.1.gz", "old"), testNow.Add(-time.Hour))
	setModTime(t, writeFile(t, dir, "stderr", "new"), testNow.Add(-time.Minute))
	setModTime(t, writeFile(t, dir, "other.log", "newest, not a match"), testNow)
	srv := storagetest.NewS3Server(t, "emr-logs")
	srv.Upload(t, dir, "j-1/driver")
	opts := srv.Options()
	name, at, err := LastWriteIn(t.Context(), []string{srv.Location("j-1/driver/stderr*")}, &opts)
	if err != nil || name != srv.Location("j-1/driver/stderr") || !at.Equal(testNow.Add(-time.Minute)) {
		t.Errorf("LastWriteIn = %q, %v, %v", name, at, err)
	}
	if name, at, err := LastWrite([]string{srv.Location("j-1/driver/stderr*")}); err != nil || name != "" || !at.IsZero() {
		t.Errorf("LastWrite without storage = %q, %v, %v", name, at, err)
	}
}

// TestLastBeatsInObjectStore: Spark's heartbeat lines in a gzip'd rolled log under a gs://
// prefix are found as in the same local file.
func TestLastBeatsInObjectStore(t *testing.T) {
	t.Parallel()
	log := "26/11/30 11:58:00 INFO MicroBatchExecution: Streaming query made progress: {\n" +
		"  \"id\" : \"5f1c0d2e-7a3b-4c5d-9e8f-0a1b2c3d4e5f\",\n  \"runId\" : \"9a8b7c6d-0000-4000-8000-000000000001\",\n" +
		"  \"timestamp\" : \"2026-11-30T11:58:00.000Z\"\n}\n"
	local := t.TempDir()
	setModTime(t, writeFile(t, local, "stderr", log), testNow)
	want, err := LastBeats([]string{filepath.Join(local, "stderr*")}, 0, time.UTC)
	if err != nil || len(want) != 1 || want[0].Query == "" {
		t.Fatalf("local beats %+v, %v", want, err)
	}
	up := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(log))
	zw.Close()
	setModTime(t, writeFile(t, up, "stderr.1.gz", gz.String()), testNow)
	srv := storagetest.NewGCSServer(t, "dataproc-logs")
	srv.Upload(t, up, "driver")
	opts := srv.Options()
	got, err := LastBeatsIn(t.Context(), []string{srv.Location("driver/")}, 0, time.UTC, &opts)
	if err != nil || len(got) != 1 || got[0].Query != want[0].Query || got[0].Run != want[0].Run || !got[0].At.Equal(want[0].At) {
		t.Errorf("gs:// beats %+v, %v; local %+v", got, err, want)
	}
}
