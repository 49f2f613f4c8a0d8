package logtest

import "testing"

func TestSeen(t *testing.T) {
	var b Buffer
	before := b.Seen("ready")
	b.Write([]byte("starting\nrea"))
	select {
	case <-before:
		t.Fatal("Seen closed before the text was written whole")
	default:
	}
	b.Write([]byte("dy on :8080\n"))
	select {
	case <-before:
	default:
		t.Fatal("Seen not closed once the text spans two writes")
	}
	select {
	case <-b.Seen("on :8080"):
	default:
		t.Fatal("Seen of text already written is not closed at once")
	}
}
