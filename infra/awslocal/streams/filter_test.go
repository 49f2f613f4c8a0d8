package streams

import (
	"encoding/json"
	"testing"
)

// The template's pattern, and the rules the assembly emulates, against
// records as Lambda's filter sees them.
func TestFilter(t *testing.T) {
	const outbox = `{"eventName": ["INSERT"], "dynamodb": {"Keys": {"sk": {"S": ["D"]}}}}`
	rec := func(name, sk string) string {
		return `{"eventName":"` + name + `","dynamodb":{"Keys":{"pk":{"S":"D#msg_1"},"sk":{"S":"` + sk + `"}}}}`
	}
	for _, c := range []struct {
		pattern, record string
		want            bool
	}{
		{outbox, rec("INSERT", "D"), true},
		{outbox, rec("MODIFY", "D"), false},
		{outbox, rec("INSERT", "A#1"), false},
		{outbox, `{"eventName":"INSERT"}`, false},
		{`{"dynamodb": {"Keys": {"pk": {"S": [{"prefix": "D#"}]}}}}`, rec("INSERT", "x"), true},
		{`{"dynamodb": {"NewImage": [{"exists": false}]}}`, rec("REMOVE", "D"), true},
		{`{"dynamodb": {"Keys": [{"exists": true}]}}`, rec("REMOVE", "D"), true},
	} {
		f, err := ParseFilter(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(c.record), &doc); err != nil {
			t.Fatal(err)
		}
		if got := f.Match(doc); got != c.want {
			t.Errorf("%s on %s = %v, want %v", c.pattern, c.record, got, c.want)
		}
	}
	for _, bad := range []string{`{"a": [{"anything-but": ["x"]}]}`, `{"a": [{"numeric": [">", 1]}]}`, `{"a": "x"}`, `[`} {
		if _, err := ParseFilter(bad); err == nil {
			t.Errorf("ParseFilter(%s): no error; the rule is not emulated", bad)
		}
	}
}
