package fsblob_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/blob/fsblob"
)

func ExampleStore_SignURL() {
	dir, _ := os.MkdirTemp("", "blobs")
	defer os.RemoveAll(dir)
	secret := []byte("an example secret of 32 bytes!!!")
	s, err := fsblob.New(dir, "https://files.example.com", secret)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if _, err := s.Put(ctx, "videos/gen_1/sample-0.mp4", strings.NewReader("..."), "video/mp4"); err != nil {
		fmt.Println(err)
		return
	}
	url, _ := s.SignURL(ctx, "videos/gen_1/sample-0.mp4", time.Date(2025, 11, 14, 12, 0, 0, 0, time.UTC))
	fmt.Println(url)
	// Output:
	// https://files.example.com/files/videos/gen_1/sample-0.mp4?expires=1763121600&signature=592809cdb397abfdbc12311322c00bee500d4e2c2f009078ee61aea26bb8a7f7
}
