package render

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCaption(t *testing.T) {
	tests := []struct {
		name, prompt string
		width        int
		want         string
	}{
		{"short", "a red fox", 20, "a red fox"},
		{"wraps at words", "the quick brown fox jumps over", 15, "the quick brown\nfox jumps over"},
		{"keeps newlines", "one\ntwo", 20, "one\ntwo"},
		{"drops empty lines", "one\n\n\r\ntwo", 20, "one\ntwo"},
		{"tabs and controls", "a\tb\x07c\u200bd", 20, "a bcd"},
		{"cuts long words", "abcdefghij", 4, "abcd\nefgh\nij"},
		{"four lines then ellipsis", "l1\nl2\nl3\nl4\nl5", 20, "l1\nl2\nl3\nl4…"},
		{"ellipsis within width", "aaaa bbbb cccc dddd eeee", 4, "aaaa\nbbbb\ncccc\nddd…"},
		{"hostile text kept verbatim", `%{n} \ ' " : ; , [v]`, 40, `%{n} \ ' " : ; , [v]`},
		{"unicode counts runes", "ünï ćöd", 3, "ünï\nćöd"},
		{"invalid utf-8", "a\xffb", 10, "a\uFFFDb"},
		{"blank", " \n\t ", 10, ""},
	}
	for _, tt := range tests {
		if got := caption(tt.prompt, tt.width); got != tt.want {
			t.Errorf("%s: caption(%q, %d) = %q, want %q", tt.name, tt.prompt, tt.width, got, tt.want)
		}
	}
}

func TestCaptionFitsWidth(t *testing.T) {
	prompt := strings.Repeat("word ", 500) + strings.Repeat("x", 300)
	for _, width := range []int{8, 30, 60} {
		got := caption(prompt, width)
		lines := strings.Split(got, "\n")
		if len(lines) > maxCaptionLines {
			t.Errorf("width %d: %d lines, want at most %d", width, len(lines), maxCaptionLines)
		}
		for _, l := range lines {
			if n := len([]rune(l)); n > width {
				t.Errorf("width %d: line %q is %d characters", width, l, n)
			}
		}
	}
}

// TestCaptionIsLiteral runs the caption filter over a still background:
// with drawtext's text expansion on, "%{n}" would print the frame number
// and the frames would differ.
func TestCaptionIsLiteral(t *testing.T) {
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, captionFile), []byte(`%{n} %{pts} %{localtime} \ ' : ,`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(DefaultFontFile, filepath.Join(work, fontFile)); err != nil {
		t.Fatal(err)
	}
	hashes := func(graph string) []string {
		cmd := exec.Command("ffmpeg", "-v", "error", "-filter_complex", graph+"[v]", "-map", "[v]", "-f", "framemd5", "-")
		cmd.Dir = work
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ffmpeg %s: %v", graph, err)
		}
		var hs []string
		for _, line := range strings.Split(string(out), "\n") {
			if line != "" && !strings.HasPrefix(line, "#") {
				f := strings.Split(line, ",")
				hs = append(hs, strings.TrimSpace(f[len(f)-1]))
			}
		}
		return hs
	}
	bg := "color=c=gray:s=320x240:r=24:d=0.25,format=yuv420p"
	s := frameSpec{w: 320, h: 240, duration: 1, fontSize: 16, captioned: true}
	plain, captioned := hashes(bg), hashes(bg+","+drawCaption(s, look{}, ""))
	if len(captioned) < 2 {
		t.Fatalf("got %d frames, want several", len(captioned))
	}
	for i, h := range captioned {
		if h != captioned[0] {
			t.Errorf("frame %d differs from frame 0: the caption text was expanded", i)
		}
		if h == plain[i] {
			t.Errorf("frame %d is the plain background: no caption drawn", i)
		}
	}
}
