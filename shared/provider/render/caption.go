package render

import (
	"strings"
	"unicode"
)

const maxCaptionLines = 4

// caption turns a prompt into the text drawn over the video: printable
// characters only, word-wrapped to width characters a line, at most
// maxCaptionLines lines, cut with an ellipsis. drawtext does not wrap, and a
// 2000-character prompt would otherwise run off the frame.
func caption(prompt string, width int) string {
	prompt = strings.ToValidUTF8(prompt, "\uFFFD")
	var words []string
	for _, para := range strings.Split(prompt, "\n") {
		var b strings.Builder
		for _, r := range para {
			switch {
			case r == '\t' || unicode.IsSpace(r):
				b.WriteByte(' ')
			case unicode.IsPrint(r):
				b.WriteRune(r)
			}
		}
		words = append(words, strings.Fields(b.String())...)
		words = append(words, "\n") // paragraph break
	}

	var lines []string
	var cur []rune
	flush := func() {
		lines = append(lines, strings.TrimRight(string(cur), " "))
		cur = cur[:0]
	}
	for _, w := range words {
		if w == "\n" {
			if len(cur) > 0 {
				flush()
			}
			continue
		}
		rw := []rune(w)
		if len(cur) > 0 && len(cur)+1+len(rw) > width {
			flush()
		}
		if len(cur) > 0 {
			cur = append(cur, ' ')
		}
		for len(rw) > width-len(cur) { // a word longer than a line is cut
			n := width - len(cur)
			cur = append(cur, rw[:n]...)
			rw = rw[n:]
			flush()
		}
		cur = append(cur, rw...)
	}
	if len(cur) > 0 {
		flush()
	}
	if len(lines) > maxCaptionLines {
		last := []rune(lines[maxCaptionLines-1])
		if len(last) >= width {
			last = last[:width-1]
		}
		lines = append(lines[:maxCaptionLines-1], string(last)+"…")
	}
	return strings.Join(lines, "\n")
}

// captionWidth is how many characters of the caption font fit on a line of
// a frame w pixels wide at the given font size, with a margin.
func captionWidth(w, fontSize int) int {
	// DejaVu Sans averages about 0.55 em a character.
	n := int(float64(w) * 0.85 / (float64(fontSize) * 0.55))
	return max(n, 8)
}
