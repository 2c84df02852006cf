package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"syscall"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/minio/minio-go/v7"
	"google.golang.org/api/googleapi"
)

// ErrorClass is what kind of failure an error is, across backends.
type ErrorClass int

// The classes. ClassOther is also the class of a nil error.
const (
	ClassOther      ErrorClass = iota
	ClassPermission            // permission denied (local) or access denied (S3)
	ClassNotFound              // no such file, directory, key, prefix or bucket
	ClassTimeout               // deadline exceeded, network or server timeout
)

func (c ErrorClass) String() string {
	switch c {
	case ClassPermission:
		return "permission denied"
	case ClassNotFound:
		return "not found"
	case ClassTimeout:
		return "timeout"
	default:
		return "other"
	}
}

// Error is a failed storage operation: what was done, to which name, and why.
type Error struct {
	Op    string // list, stat, read, write, delete, rename
	Path  string // the name relative to the location, or the location for the root
	Class ErrorClass
	Err   error // the cause, without the path repeated
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Op, e.Path, causeText(e.Err))
}

func (e *Error) Unwrap() error { return e.Err }

// Class returns the class of err, looking through wrapping.
func Class(err error) ErrorClass {
	if err == nil {
		return ClassOther
	}
	var se *Error
	if errors.As(err, &se) {
		return se.Class
	}
	return classify(err)
}

func classify(err error) ErrorClass {
	var ae *azcore.ResponseError
	if errors.As(err, &ae) {
		if c := statusClass(ae.StatusCode); c != ClassOther {
			return c
		}
		if ae.ErrorCode == "OperationTimedOut" {
			return ClassTimeout
		}
		return ClassOther
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return statusClass(ge.Code)
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		switch resp.Code {
		case "AccessDenied", "AllAccessDisabled", "AccountProblem", "InvalidAccessKeyId",
			"SignatureDoesNotMatch", "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
			return ClassPermission
		case "NoSuchKey", "NoSuchBucket", "NoSuchUpload", "NotFound":
			return ClassNotFound
		case "RequestTimeout":
			return ClassTimeout
		}
		return statusClass(resp.StatusCode)
	}
	switch {
	case errors.Is(err, fs.ErrPermission):
		return ClassPermission
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return ClassNotFound
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, syscall.ETIMEDOUT):
		return ClassTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ClassTimeout
	}
	return ClassOther
}

// statusClass is the class of an object store's HTTP status: Azure's, GCS's and S3's share it.
func statusClass(code int) ErrorClass {
	switch code {
	case 401, 403:
		return ClassPermission
	case 404:
		return ClassNotFound
	case 408, 504:
		return ClassTimeout
	}
	return ClassOther
}

// wrap builds an *Error; the cause keeps its identity for errors.Is.
func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	return &Error{Op: op, Path: name, Class: classify(err), Err: unwrapPath(err)}
}

// unwrapPath drops *fs.PathError and *os.LinkError so the absolute path is not repeated.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func causeText(err error) string {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		msg := resp.Message
		if msg == "" {
			msg = resp.Code
		}
		class := classify(resp)
		if class == ClassPermission {
			return fmt.Sprintf("access denied (S3 %s, HTTP %d: %s)", resp.Code, resp.StatusCode, msg)
		}
		return fmt.Sprintf("%s (S3 %s, HTTP %d)", msg, resp.Code, resp.StatusCode)
	}
	var ae *azcore.ResponseError
	if errors.As(err, &ae) {
		// Never ae.Error(): it carries the request URL, which may hold a SAS token.
		code := ae.ErrorCode
		if code == "" {
			code = http.StatusText(ae.StatusCode)
		}
		if classify(ae) == ClassPermission {
			return fmt.Sprintf("access denied (Azure %s, HTTP %d)", code, ae.StatusCode)
		}
		return fmt.Sprintf("%s (Azure HTTP %d)", code, ae.StatusCode)
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		msg := ge.Message
		if msg == "" { // a body that is not GCS's JSON error (a proxy, an emulator's plain 404)
			msg = http.StatusText(ge.Code)
		}
		if classify(ge) == ClassPermission {
			return fmt.Sprintf("access denied (GCS HTTP %d: %s)", ge.Code, msg)
		}
		return fmt.Sprintf("%s (GCS HTTP %d)", msg, ge.Code)
	}
	return err.Error()
}
