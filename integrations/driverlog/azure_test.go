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

// TestScanAzurePrefix: driver logs under an abfss:// prefix (Azurite through azblob), rolled
// and gzip'd as Databricks and HDInsight deliver them, give the same findings as the same
// lines in local files, rolled files oldest first, within max_bytes per file.
func TestScanAzurePrefix(t *testing.T) {
	t.Parallel()
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
		writeFile(t, local, f.name, string(data))
		name := f.name
		if i < len(rolled)-1 {
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			zw.Write(data)
			zw.Close()
			data, name = gz.Bytes(), name+".gz"
		}
		uploaded[f.name] = writeFile(t, upload, name, string(data))
		setModTime(t, uploaded[f.name], testNow.Add(time.Duration(i-10)*time.Minute))
	}
	srv := storagetest.NewAzureServer(t, "databricks-logs")
	srv.UploadInOrder(t, upload, "cluster-logs/0101-abc/driver")
	// The blobs' times, which Azure stamped, become the local files' too.
	for name, up := range uploaded {
		info, err := os.Stat(up)
		if err != nil {
			t.Fatal(err)
		}
		setModTime(t, filepath.Join(local, name), info.ModTime())
	}
	now := func() time.Time { return time.Now().Add(time.Minute) }

	for _, maxBytes := range []int64{DefaultMaxBytes, 3000} { // 3000: only each file's tail
		opt := testOptions(filepath.Join(local, "stderr*"))
		opt.MaxBytes, opt.Now = maxBytes, now
		want, err := Scan(t.Context(), opt)
		if err != nil || len(want.Matches) < 3 || len(want.Errors) > 0 {
			t.Fatalf("local scan: %+v, %v", want, err)
		}
		pattern := srv.Location("cluster-logs/0101-abc/driver/stderr*")
		opt = testOptions(pattern)
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
