package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// AzureOptions configures abfss://, abfs://, wasbs:// and wasb:// locations.
type AzureOptions struct {
	// Endpoint is the Blob service URL (Azurite: http://127.0.0.1:10000/devstoreaccount1).
	// Empty: the BlobEndpoint of AZURE_STORAGE_CONNECTION_STRING, then
	// https://<account>.blob.<suffix of the location's host>.
	Endpoint string
	// DFSEndpoint is the Data Lake (dfs) service URL that abfss:// access control is read from.
	// Empty: the blob endpoint with its host's ".blob." turned into ".dfs.".
	DFSEndpoint string
	// Transport replaces the HTTP transport (tests, proxies); nil uses the SDK's.
	Transport policy.Transporter
}

// azureStore is a prefix in an Azure Blob Storage container (ADLS Gen2 included: its blob
// endpoint serves the same files). Blob names are prefix + name; "directories" are name
// prefixes ending in "/", and on a hierarchical namespace also blobs marked hdi_isfolder.
type azureStore struct {
	objectRoot
	account   string
	container string
	hns       bool // abfs(s)://: a hierarchical namespace whose ACLs can be read
	client    *container.Client
	// dfs reaches a path on the dfs endpoint with the same credential (access control).
	dfs func(pathURL string) (*blob.Client, error)
}

// azureLocation splits container@account.dfs.core.windows.net (or .blob.) into its parts.
func azureLocation(location, rest string) (ctr, account, host, prefix string, err error) {
	authority, prefix, _ := strings.Cut(rest, "/")
	ctr, host, ok := strings.Cut(authority, "@")
	if !ok || ctr == "" || host == "" {
		return "", "", "", "", fmt.Errorf("open storage %s: want container@account.dfs.core.windows.net/prefix", location)
	}
	account, _, _ = strings.Cut(host, ".")
	if account == "" {
		return "", "", "", "", fmt.Errorf("open storage %s: no account in %q", location, host)
	}
	return ctr, account, strings.ToLower(host), prefix, nil
}

func newAzure(location, scheme, rest string, opts Options) (Store, error) {
	ctr, account, host, prefix, err := azureLocation(location, rest)
	if err != nil {
		return nil, err
	}
	conn := parseConnectionString(opts.Getenv("AZURE_STORAGE_CONNECTION_STRING"))
	if conn != nil && conn["AccountName"] != "" && !strings.EqualFold(conn["AccountName"], account) {
		return nil, fmt.Errorf("open storage %s: AZURE_STORAGE_CONNECTION_STRING is for account %q, the location names %q", location, conn["AccountName"], account)
	}
	endpoint := firstNonEmpty(opts.Azure.Endpoint, conn["BlobEndpoint"])
	if endpoint == "" {
		// The dfs host maps to the blob endpoint for blob operations.
		blobHost := strings.Replace(host, ".dfs.", ".blob.", 1)
		endpoint = "https://" + blobHost
	}
	if _, err := url.Parse(endpoint); err != nil {
		return nil, fmt.Errorf("open storage %s: endpoint %q: %w", location, endpoint, err)
	}
	endpoint = strings.TrimSuffix(endpoint, "/")
	dfsEndpoint := opts.Azure.DFSEndpoint
	if dfsEndpoint == "" {
		u, _ := url.Parse(endpoint)
		u.Host = strings.Replace(u.Host, ".blob.", ".dfs.", 1)
		dfsEndpoint = u.String()
	}
	dfsEndpoint = strings.TrimSuffix(dfsEndpoint, "/")

	co := azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: 3}, Transport: opts.Azure.Transport}
	bopts, copts := &blob.ClientOptions{ClientOptions: co}, &container.ClientOptions{ClientOptions: co}
	// newClient makes a client of one URL with the credential the environment gives.
	var newClient func(u string) (*blob.Client, error)
	var ctrClient *container.Client
	ctrURL := endpoint + "/" + ctr
	switch {
	case conn != nil && conn["AccountKey"] != "":
		cred, err := azblob.NewSharedKeyCredential(account, conn["AccountKey"])
		if err != nil {
			return nil, fmt.Errorf("open storage %s: AZURE_STORAGE_CONNECTION_STRING: %w", location, err)
		}
		newClient = func(u string) (*blob.Client, error) { return blob.NewClientWithSharedKeyCredential(u, cred, bopts) }
		ctrClient, err = container.NewClientWithSharedKeyCredential(ctrURL, cred, copts)
		if err != nil {
			return nil, fmt.Errorf("open storage %s: %w", location, err)
		}
	case conn != nil && conn["SharedAccessSignature"] != "":
		sas := strings.TrimPrefix(conn["SharedAccessSignature"], "?")
		newClient = func(u string) (*blob.Client, error) { return blob.NewClientWithNoCredential(withQuery(u, sas), bopts) }
		ctrClient, err = container.NewClientWithNoCredential(ctrURL+"?"+sas, copts)
		if err != nil {
			return nil, fmt.Errorf("open storage %s: %w", location, err)
		}
	case conn != nil:
		return nil, fmt.Errorf("open storage %s: AZURE_STORAGE_CONNECTION_STRING has neither AccountName and AccountKey nor SharedAccessSignature", location)
	default:
		// Environment (service principal), workload identity, managed identity, Azure CLI.
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("open storage %s: azure credentials: %w", location, err)
		}
		newClient = func(u string) (*blob.Client, error) { return blob.NewClient(u, cred, bopts) }
		ctrClient, err = container.NewClient(ctrURL, cred, copts)
		if err != nil {
			return nil, fmt.Errorf("open storage %s: %w", location, err)
		}
	}
	prefix = strings.Trim(path.Clean("/"+prefix), "/")
	if prefix != "" {
		prefix += "/"
	}
	s := &azureStore{objectRoot: objectRoot{location, prefix}, account: account, container: ctr, client: ctrClient,
		hns: scheme == "abfss" || scheme == "abfs"}
	s.dfs = func(p string) (*blob.Client, error) {
		return newClient(dfsEndpoint + "/" + ctr + "/" + (&url.URL{Path: p}).EscapedPath() + "?action=getAccessControl&upn=false")
	}
	return s, nil
}

// parseConnectionString reads an Azure Storage connection string
// ("DefaultEndpointsProtocol=https;AccountName=…;AccountKey=…;EndpointSuffix=core.windows.net");
// nil when it is empty. The SDK's own parser is internal to it, and the account key is needed
// for the dfs endpoint as well as the blob one.
func parseConnectionString(s string) map[string]string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	m := map[string]string{}
	for _, part := range strings.Split(strings.TrimRight(s, ";"), ";") {
		if k, v, ok := strings.Cut(part, "="); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

func withQuery(u, q string) string {
	if strings.Contains(u, "?") {
		return u + "&" + q
	}
	return u + "?" + q
}

// isFolder is true for the blobs a hierarchical namespace shows its directories as.
func isFolder(meta map[string]*string) bool {
	for k, v := range meta {
		if strings.EqualFold(k, "hdi_isfolder") && v != nil && strings.EqualFold(*v, "true") {
			return true
		}
	}
	return false
}

func (s *azureStore) List(ctx context.Context, dir string) ([]Entry, error) {
	name, err := cleanName(dir)
	if err != nil {
		return nil, &Error{Op: "list", Path: dir, Class: ClassOther, Err: err}
	}
	p := s.dirPrefix(name)
	found := false
	seen := map[string]bool{}
	var out []Entry
	pager := s.client.NewListBlobsHierarchyPager("/", &container.ListBlobsHierarchyOptions{
		Prefix: to.Ptr(p), Include: container.ListBlobsInclude{Metadata: s.hns}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, wrap("list", s.display(name), err)
		}
		for _, bp := range page.Segment.BlobPrefixes {
			found = true
			rel := strings.TrimSuffix(strings.TrimPrefix(*bp.Name, p), "/")
			if rel != "" && !seen[rel] {
				seen[rel] = true
				out = append(out, Entry{Name: rel, IsDir: true})
			}
		}
		for _, b := range page.Segment.BlobItems {
			found = true
			rel := strings.TrimPrefix(*b.Name, p)
			switch {
			case rel == "" || strings.HasSuffix(rel, "/"): // a "directory marker" blob
			case isFolder(b.Metadata):
				if !seen[rel] {
					seen[rel] = true
					out = append(out, Entry{Name: rel, IsDir: true})
				}
			default:
				e := Entry{Name: rel}
				if pr := b.Properties; pr != nil {
					e.Size = derefInt(pr.ContentLength)
					if pr.LastModified != nil {
						e.ModTime = *pr.LastModified
					}
					if pr.ETag != nil {
						e.ETag = strings.Trim(string(*pr.ETag), `"`)
					}
				}
				out = append(out, e)
			}
		}
	}
	if !found {
		return nil, &Error{Op: "list", Path: s.display(name), Class: ClassNotFound, Err: errors.New("no such prefix")}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func (s *azureStore) blob(name string) *blob.Client { return s.client.NewBlobClient(s.prefix + name) }

func (s *azureStore) Stat(ctx context.Context, name string) (Entry, error) {
	clean, err := cleanName(name)
	if err != nil {
		return Entry{}, &Error{Op: "stat", Path: name, Class: ClassOther, Err: err}
	}
	if clean != "" {
		props, err := s.blob(clean).GetProperties(ctx, nil)
		if err == nil && !isFolder(props.Metadata) {
			e := Entry{Name: path.Base(clean), Size: derefInt(props.ContentLength)}
			if props.LastModified != nil {
				e.ModTime = *props.LastModified
			}
			if props.ETag != nil {
				e.ETag = strings.Trim(string(*props.ETag), `"`)
			}
			return e, nil
		}
		if err != nil && classify(err) != ClassNotFound {
			return Entry{}, wrap("stat", clean, err)
		}
	}
	pager := s.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to.Ptr(s.dirPrefix(clean)), MaxResults: to.Ptr[int32](1)})
	page, err := pager.NextPage(ctx)
	return s.dirEntry(clean, s.container, err == nil && len(page.Segment.BlobItems) > 0, err)
}

func (s *azureStore) Read(ctx context.Context, name string) (io.ReadCloser, error) {
	clean, err := fileName("read", name)
	if err != nil {
		return nil, err
	}
	resp, err := s.blob(clean).DownloadStream(ctx, nil)
	if err != nil {
		return nil, wrap("read", clean, err)
	}
	return &objectReader{body: resp.Body, name: clean}, nil
}

func (s *azureStore) Write(ctx context.Context, name string, r io.Reader) error {
	clean, err := fileName("write", name)
	if err != nil {
		return err
	}
	r, size, err := sized(r)
	if err != nil {
		return wrap("write", clean, err)
	}
	bb := s.client.NewBlockBlobClient(s.prefix + clean)
	if size >= 0 {
		// One Put Blob; the body is re-read on a retry.
		data, err := io.ReadAll(r)
		if err != nil {
			return wrap("write", clean, err)
		}
		_, err = bb.Upload(ctx, streaming.NopCloser(bytes.NewReader(data)), nil)
		return wrap("write", clean, err)
	}
	_, err = bb.UploadStream(ctx, r, nil)
	return wrap("write", clean, err)
}

func (s *azureStore) Delete(ctx context.Context, name string) error {
	clean, err := fileName("delete", name)
	if err != nil {
		return err
	}
	_, err = s.blob(clean).Delete(ctx, nil)
	return wrap("delete", clean, err)
}

func (s *azureStore) Rename(ctx context.Context, from, to string) error {
	cf, ct, what, err := renameNames(from, to)
	if err != nil {
		return err
	}
	src, dst := s.blob(cf), s.blob(ct)
	if _, err := src.GetProperties(ctx, nil); err != nil {
		return wrap("rename", what, err)
	}
	// The copy is conditional on the target not existing (If-None-Match: *), so two renames
	// cannot both win; within one account Copy Blob is authorised by this request alone.
	etagAny := azcore.ETagAny
	res, err := dst.StartCopyFromURL(ctx, src.URL(), &blob.StartCopyFromURLOptions{
		AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: &etagAny}}})
	if err != nil {
		if c := responseCode(err); c == http.StatusConflict || c == http.StatusPreconditionFailed {
			return &Error{Op: "rename", Path: what, Class: ClassOther, Err: os.ErrExist}
		}
		return wrap("rename", what, err)
	}
	for status := res.CopyStatus; status != nil && *status == blob.CopyStatusTypePending; {
		select {
		case <-ctx.Done():
			return wrap("rename", what, ctx.Err())
		case <-time.After(200 * time.Millisecond): // a large copy between storage units
		}
		props, err := dst.GetProperties(ctx, nil)
		if err != nil {
			return wrap("rename", what, err)
		}
		status = props.CopyStatus
	}
	if res.CopyStatus != nil && *res.CopyStatus != blob.CopyStatusTypeSuccess && *res.CopyStatus != blob.CopyStatusTypePending {
		return &Error{Op: "rename", Path: what, Class: ClassOther, Err: fmt.Errorf("copy %s", *res.CopyStatus)}
	}
	_, err = src.Delete(ctx, nil)
	return wrap("rename", what, err)
}

// responseCode is the HTTP status of an Azure error, 0 for other errors.
func responseCode(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// PathAccess is what a hierarchical namespace says of one path's access control
// (Path - Get Properties with action=getAccessControl): the owner's and the owning group's
// object IDs (or $superuser), the permissions ("rwxr-x---", "+" when an ACL extends them)
// and the ACL ("user::rwx,user:<object id>:r-x,group::r-x,mask::r-x,other::---").
type PathAccess struct {
	Path        string // the location for "", else container-relative ("/" the container's root)
	Owner       string
	Group       string
	Permissions string
	ACL         string
}

// AccessControl reads the access control of the location's directories without writing:
// the container's root and every directory above the location (outermost first), then each
// of names (relative to the location; "" is the location itself). It is a ClassOther error,
// saying so, for wasb(s):// locations, whose flat namespace has no ACLs.
func (s *azureStore) AccessControl(ctx context.Context, names ...string) (ancestors, dirs []PathAccess, err error) {
	if !s.hns {
		return nil, nil, &Error{Op: "get access control", Path: s.location, Class: ClassOther,
			Err: errors.New("a wasb(s):// location has no hierarchical namespace, so no ACLs")}
	}
	parts := strings.Split(strings.TrimSuffix(s.prefix, "/"), "/")
	if s.prefix == "" {
		parts = nil
	}
	for i := 0; i < len(parts); i++ {
		p := "/" + strings.Join(parts[:i], "/")
		a, err := s.pathAccess(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		ancestors = append(ancestors, a)
	}
	for _, n := range names {
		clean, err := cleanName(n)
		if err != nil {
			return nil, nil, &Error{Op: "get access control", Path: n, Class: ClassOther, Err: err}
		}
		a, err := s.pathAccess(ctx, "/"+strings.TrimSuffix(s.prefix+clean, "/"))
		if err != nil {
			return nil, nil, err
		}
		if clean == "" {
			a.Path = s.location
		} else {
			a.Path = clean
		}
		dirs = append(dirs, a)
	}
	return ancestors, dirs, nil
}

// pathAccess sends Path - Get Properties (HEAD /{filesystem}/{path}?action=getAccessControl&upn=false)
// to the dfs endpoint through the SDK's pipeline (credential, retries): a blob client of that
// URL sends exactly that signed HEAD and keeps the query; the x-ms-owner, x-ms-group,
// x-ms-permissions and x-ms-acl headers are read from the raw response.
func (s *azureStore) pathAccess(ctx context.Context, p string) (PathAccess, error) {
	c, err := s.dfs(strings.TrimPrefix(p, "/"))
	if err != nil {
		return PathAccess{}, wrap("get access control", p, err)
	}
	var raw *http.Response
	if _, err := c.GetProperties(policy.WithCaptureResponse(ctx, &raw), nil); err != nil {
		return PathAccess{}, wrap("get access control", p, err)
	}
	h := raw.Header
	a := PathAccess{Path: p, Owner: h.Get("x-ms-owner"), Group: h.Get("x-ms-group"),
		Permissions: h.Get("x-ms-permissions"), ACL: h.Get("x-ms-acl")}
	if a.Permissions == "" {
		return PathAccess{}, &Error{Op: "get access control", Path: p, Class: ClassOther,
			Err: errors.New("the dfs endpoint returned no x-ms-permissions (is the hierarchical namespace on?)")}
	}
	return a, nil
}
