package wire

import "regexp"

// MaxReferenceImages is the most reference images a text-to-video start
// brings (referenceImages): Veo 3.1's "up to three asset images"
// (shared/provider/veo/veomodels).
const MaxReferenceImages = 3

// uploadIDShape is an Upload's UploadID: "upl_" and 32 hex digits.
var uploadIDShape = regexp.MustCompile(`^upl_[0-9a-f]{32}$`)

// IsUploadID reports whether s has the shape of an UploadID: how a client
// tells an upload's id from a file's name, and how the service refuses a
// made-up id before it looks for one.
func IsUploadID(s string) bool { return uploadIDShape.MatchString(s) }

// UploadRequest is the body of POST /api/gen/uploads.
type UploadRequest struct {
	// ContentType is image/jpeg or image/png.
	ContentType string `json:"contentType"`
}

// Upload is the 201 of POST /api/gen/uploads: a signed form for one image
// uploaded straight to storage, which a start then names by UploadID.
type Upload struct {
	Success   bool   `json:"success"`
	UploadID  string `json:"uploadId"`
	UploadURL string `json:"uploadUrl"`
	// Method is POST: the form is posted to UploadURL.
	Method string `json:"method"`
	// Fields are the form fields to send, unchanged, before the file.
	Fields map[string]string `json:"fields"`
	// FileField is the form field of the file.
	FileField   string `json:"fileField"`
	ContentType string `json:"contentType"`
	MaxBytes    int64  `json:"maxBytes"`
	ExpiresAt   Time   `json:"expiresAt"`
}
