package slackfake

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Files, as Slack takes them today (files.upload is retired): files.getUploadURLExternal
// answers an upload URL and a file id for a file name and its length in bytes (and keeps
// alt_txt, an image's description for screen readers, at most 1,000 characters); the client
// POSTs the bytes there (raw, or multipart form-encoded: the part with a file name); then
// files.completeUploadExternal shares the files, once, in channel_id (optionally as a reply
// in thread_ts, with initial_comment). A file is only visible once completed.
//
// Stricter than Slack where leniency would hide a bug: an upload whose size differs from the
// length announced is refused with HTTP 400 (Slack's size check is not documented), a second
// upload to one URL too, and completing a file that was never uploaded answers file_not_found.

// File is a file shared through files.completeUploadExternal.
type File struct {
	ID          string
	Name        string
	Title       string
	SnippetType string
	// AltText is the alt_txt given to files.getUploadURLExternal.
	AltText string
	Content []byte
	// Channel is where it was shared ("" when no channel was given: a private file), ThreadTS
	// the thread it was shared in, MessageTS the message that shares it.
	Channel, ThreadTS, MessageTS string
	Comment                      string
}

// upload is a file between files.getUploadURLExternal and files.completeUploadExternal.
type upload struct {
	id, name, snippet, alt string
	length                 int
	data                   []byte
	uploaded, shared       bool
}

// maxUpload bounds what the fake accepts in one upload.
const maxUpload = 10 << 20

// getUploadURLLocked answers files.getUploadURLExternal.
func (s *Server) getUploadURLLocked(p map[string]string) answer {
	length, err := strconv.Atoi(p["length"])
	switch {
	case p["filename"] == "", err != nil, length <= 0:
		return errAnswer("missing_argument")
	case length > maxUpload:
		return errAnswer("file_upload_size_restricted")
	case utf8Len(p["alt_txt"]) > 1000:
		return errAnswer("alt_txt_too_large")
	}
	ticket := s.randLocked(alnum, 24)
	u := &upload{id: "F" + s.randLocked(alnum, 10), name: p["filename"], snippet: p["snippet_type"], alt: p["alt_txt"], length: length}
	s.uploads[ticket] = u
	s.uploadsByID[u.id] = u
	return okAnswer(map[string]any{"upload_url": s.base + "/upload/v1/" + ticket, "file_id": u.id})
}

func utf8Len(s string) int { return len([]rune(s)) }

// handleUpload serves POSTs of a file's bytes to an upload URL.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	ticket := strings.TrimPrefix(r.URL.Path, "/upload/v1/")
	data, err := uploadedBytes(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.uploads[ticket]
	status, msg := http.StatusOK, ""
	switch {
	case r.Method != http.MethodPost:
		status, msg = http.StatusMethodNotAllowed, "POST the file"
	case u == nil:
		status, msg = http.StatusNotFound, "no such upload URL"
	case err != nil:
		status, msg = http.StatusBadRequest, err.Error()
	case u.uploaded:
		status, msg = http.StatusBadRequest, "this URL already received its file"
	case len(data) != u.length:
		status, msg = http.StatusBadRequest, fmt.Sprintf("received %d bytes; files.getUploadURLExternal was told %d", len(data), u.length)
	default:
		u.data, u.uploaded = data, true
		msg = fmt.Sprintf("OK - %d", len(data))
	}
	s.calls = append(s.calls, Call{Method: "file_upload", Params: map[string]string{"file_id": idOf(u)}, Status: status,
		Error: map[bool]string{true: msg}[status != http.StatusOK], At: s.opts.Clock()})
	s.logf("upload %s → %d %s", ticket, status, msg)
	s.notifyLocked()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg)
}

func idOf(u *upload) string {
	if u == nil {
		return ""
	}
	return u.id
}

// uploadedBytes reads an upload's body: raw bytes, or the file part of a multipart form.
func uploadedBytes(r *http.Request) ([]byte, error) {
	body := http.MaxBytesReader(nil, r.Body, maxUpload+1)
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return io.ReadAll(body)
	}
	mr := multipart.NewReader(body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, fmt.Errorf("no file part in the multipart form")
		}
		if err != nil {
			return nil, fmt.Errorf("read the multipart form: %w", err)
		}
		if part.FileName() != "" {
			return io.ReadAll(part)
		}
	}
}

// completeUploadLocked answers files.completeUploadExternal.
func (s *Server) completeUploadLocked(p map[string]string) answer {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if json.Unmarshal([]byte(p["files"]), &files) != nil || len(files) == 0 {
		return errAnswer("invalid_arguments")
	}
	ch := p["channel_id"]
	if ch == "" && p["channels"] != "" {
		chans := strings.Split(p["channels"], ",")
		if p["thread_ts"] != "" && len(chans) > 1 {
			return errAnswer("invalid_arguments") // a thread takes one channel
		}
		ch = chans[0]
	}
	if ch != "" && !s.channelExistsLocked(ch) {
		return errAnswer("channel_not_found")
	}
	threadTS := ""
	if p["thread_ts"] != "" {
		if ch == "" {
			return errAnswer("invalid_arguments")
		}
		var a answer
		if threadTS, a = s.threadLocked(ch, p["thread_ts"]); a.status != 0 {
			return a
		}
	}
	ups := make([]*upload, len(files))
	for i, f := range files {
		u := s.uploadsByID[f.ID]
		if u == nil || !u.uploaded || u.shared {
			return errAnswer("file_not_found")
		}
		ups[i] = u
	}
	var msgTS string
	var ids []string
	for _, f := range files {
		ids = append(ids, f.ID)
	}
	if ch != "" {
		m := s.addBotMessageLocked(ch, threadTS, p["initial_comment"], nil)
		m.Files = ids
		msgTS = m.TS
	}
	out := make([]map[string]any, len(files))
	for i, f := range files {
		u := ups[i]
		u.shared = true
		title := f.Title
		if title == "" {
			title = u.name
		}
		s.files = append(s.files, File{ID: u.id, Name: u.name, Title: title, SnippetType: u.snippet, AltText: u.alt, Content: u.data,
			Channel: ch, ThreadTS: threadTS, MessageTS: msgTS, Comment: p["initial_comment"]})
		out[i] = map[string]any{"id": u.id, "title": title}
	}
	return okAnswer(map[string]any{"files": out})
}

// Files returns the files shared so far, oldest first.
func (s *Server) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.files)
	for i := range out {
		out[i].Content = slices.Clone(out[i].Content)
	}
	return out
}
