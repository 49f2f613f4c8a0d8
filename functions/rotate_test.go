package functions_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/genvideo/gen/shared/awsstack"
)

// fakeIAM answers ListAccessKeys and DeleteAccessKey (IAM's query
// protocol) for one user's keys, and records the actions it was asked.
type fakeIAM struct {
	mu      sync.Mutex
	keys    []string
	actions []string
}

func (f *fakeIAM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	f.mu.Lock()
	defer f.mu.Unlock()
	action := r.Form.Get("Action")
	f.actions = append(f.actions, action)
	const ns = `xmlns="https://iam.amazonaws.com/doc/2010-05-08/"`
	w.Header().Set("Content-Type", "text/xml")
	switch action {
	case "ListAccessKeys":
		var members strings.Builder
		for _, k := range f.keys {
			fmt.Fprintf(&members, "<member><UserName>%s</UserName><AccessKeyId>%s</AccessKeyId><Status>Active</Status></member>", r.Form.Get("UserName"), k)
		}
		fmt.Fprintf(w, `<ListAccessKeysResponse %s><ListAccessKeysResult><AccessKeyMetadata>%s</AccessKeyMetadata><IsTruncated>false</IsTruncated></ListAccessKeysResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></ListAccessKeysResponse>`, ns, members.String())
	case "DeleteAccessKey":
		id := r.Form.Get("AccessKeyId")
		for i, k := range f.keys {
			if k == id {
				f.keys = append(f.keys[:i], f.keys[i+1:]...)
				break
			}
		}
		fmt.Fprintf(w, `<DeleteAccessKeyResponse %s><ResponseMetadata><RequestId>2</RequestId></ResponseMetadata></DeleteAccessKeyResponse>`, ns)
	default:
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `<ErrorResponse %s><Error><Type>Sender</Type><Code>InvalidAction</Code><Message>%s</Message></Error><RequestId>3</RequestId></ErrorResponse>`, ns, action)
	}
}

// Issue 34, defect 2: the rotation function is Custom::SignerKey's
// service, and CloudFormation waits for its answer. Its binary starts and
// answers whatever the provider settings the template's Globals give it
// (here a gemini generator without its key's secret and routes that are
// not JSON, which every other function refuses at cold start), and
// without its own variable it still starts and answers FAILED, naming it.
func testRotateSigner(t *testing.T, h *harness) {
	iamFake := &fakeIAM{keys: []string{"AKIAFIRSTSIGNINGKEY1"}}
	iamSrv := httptest.NewServer(iamFake)
	defer iamSrv.Close()
	answers := make(chan map[string]string, 4)
	cfn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a map[string]string
		if r.Method != http.MethodPut || json.NewDecoder(r.Body).Decode(&a) != nil {
			t.Errorf("CloudFormation's answer: %s, want a PUT of JSON", r.Method)
		}
		answers <- a
	}))
	defer cfn.Close()
	badProvider := []string{awsstack.EnvGenerator + "=gemini", awsstack.EnvRoutes + "={not json", "AWS_ENDPOINT_URL_IAM=" + iamSrv.URL}
	request := func(typ string) []byte {
		return []byte(fmt.Sprintf(`{"RequestType":%q,"ResponseURL":%q,"StackId":"arn:aws:cloudformation:us-east-1:123456789012:stack/gen/1",
			"RequestId":"req-%s","LogicalResourceId":"SignerKey","PhysicalResourceId":"signer-key-gen-signer","ResourceType":"Custom::SignerKey",
			"ResourceProperties":{"ServiceToken":"arn:fn","SecretId":%q,"UserName":"gen-signer"}}`, typ, cfn.URL, typ, "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-url-signer-AbCdEf"))
	}
	answer := func(t *testing.T) map[string]string {
		t.Helper()
		select {
		case a := <-answers:
			return a
		default:
			t.Fatal("CloudFormation got no answer: the stack would wait out the resource's ServiceTimeout")
			return nil
		}
	}

	t.Run("provider settings the API refuses", func(t *testing.T) {
		f := h.start(t, "rotate-signer", append(badProvider, awsstack.EnvSignerUser+"=gen-signer")...)
		if res := f.Invoke(t, request("Delete")); res.IsError {
			t.Fatalf("Delete: %+v", res)
		}
		if a := answer(t); a["Status"] != "SUCCESS" || a["RequestId"] != "req-Delete" {
			t.Errorf("Delete answered %v, want SUCCESS", a)
		}
		iamFake.mu.Lock()
		defer iamFake.mu.Unlock()
		if len(iamFake.keys) != 0 || strings.Join(iamFake.actions, ",") != "ListAccessKeys,DeleteAccessKey" {
			t.Errorf("IAM was asked %v and keeps keys %v, want the user's one key deleted", iamFake.actions, iamFake.keys)
		}
	})
	t.Run("no signing user", func(t *testing.T) {
		// The harness sets no GEN_SIGNER_USER.
		f := h.start(t, "rotate-signer", badProvider...)
		f.Invoke(t, request("Create"))
		if a := answer(t); a["Status"] != "FAILED" || !strings.Contains(a["Reason"], awsstack.EnvSignerUser) {
			t.Errorf("Create answered %v, want FAILED naming %s", a, awsstack.EnvSignerUser)
		}
		if res := f.Invoke(t, readEvent(t, "rotate-signer")); !res.IsError || !strings.Contains(res.ErrorMessage, awsstack.EnvSignerUser) {
			t.Errorf("a rotation step: %+v, want an error naming %s", res, awsstack.EnvSignerUser)
		}
	})
}
