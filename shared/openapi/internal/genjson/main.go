// Command genjson writes the JSON form of the OpenAPI document, which the
// service embeds and serves, from the YAML it is written in:
//
//	go generate ./shared/openapi
//
// runs it in shared/openapi as "genjson openapi.yaml openapi.json". The
// output is committed; a test of shared/openapi fails when it is stale.
package main

import (
	"fmt"
	"os"

	"github.com/genvideo/gen/shared/openapi/internal/yamljson"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genjson <openapi.yaml> <openapi.json>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "genjson:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	doc, err := yamljson.Convert(src)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, doc, 0o644)
}
