package fsblob

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Walk calls fn for every object whose key starts with prefix, in lexical
// order of keys, with the time its bytes were written. An error from fn
// stops the walk and is returned.
func (s *Store) Walk(prefix string, fn func(key string, written time.Time) error) error {
	root := filepath.Join(s.dir, "data")
	// Start below the prefix's last slash: no key outside it matches.
	start := root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = filepath.Join(root, filepath.FromSlash(prefix[:i]))
	}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile, or no such prefix
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) || !ValidKey(key) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		return fn(key, info.ModTime())
	})
	if err != nil {
		return fmt.Errorf("walk %q: %w", prefix, err)
	}
	return nil
}

// Tidy removes what writers that died (a process killed in the middle of
// a Put or a Delete) left in the store, when it was last touched before
// before: temporary files of unfinished Puts, content types whose object
// is gone, and empty directories. A Put under way writes its temporary
// file as its bytes come, so before must be earlier than the longest a
// Put may wait for its next bytes. It returns how many entries it
// removed.
func (s *Store) Tidy(before time.Time) (int, error) {
	removed := 0
	var errs []error
	remove := func(p string) {
		if err := os.Remove(p); err == nil {
			removed++
		} else if !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	old := func(info fs.FileInfo) bool { return info.ModTime().Before(before) }

	tmp, err := os.ReadDir(filepath.Join(s.dir, "tmp"))
	if err != nil {
		errs = append(errs, err)
	}
	for _, e := range tmp {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && old(info) {
			remove(filepath.Join(s.dir, "tmp", e.Name()))
		}
	}

	for _, tree := range []string{"meta", "data"} {
		root := filepath.Join(s.dir, tree)
		type dir struct {
			path string
			old  bool // as found, before anything below it was removed
		}
		var dirs []dir
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			switch {
			case d.IsDir():
				if info, err := d.Info(); err == nil && p != root {
					dirs = append(dirs, dir{p, old(info)})
				}
			case tree == "meta":
				// A Put writes the content type first and a Delete
				// removes it last: alone, it is a leftover.
				rel, _ := filepath.Rel(root, p)
				if _, err := os.Lstat(filepath.Join(s.dir, "data", rel)); errors.Is(err, fs.ErrNotExist) {
					if info, err := d.Info(); err == nil && old(info) {
						remove(p)
					}
				}
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
		// Deepest first, so that a directory emptied here goes too. One
		// that is not empty stays (Remove refuses it).
		slices.Reverse(dirs)
		for _, d := range dirs {
			if d.old && os.Remove(d.path) == nil {
				removed++
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("tidy %s: %w", s.dir, err)
	}
	return removed, nil
}
