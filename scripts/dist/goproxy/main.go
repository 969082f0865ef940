// Command goproxy writes Go modules into a module proxy's file layout (the
// GOPROXY protocol, served as file://OUT): for each module given,
//
//	OUT/<escaped module path>/@v/list, <v>.info, <v>.mod, <v>.zip
//
// The zip is made by golang.org/x/mod/zip, the go command's own rules (no
// nested module, no vendor folder, sizes and paths checked), from a copy of the
// module's folder in which a symbolic link is replaced by the file it names
// (bindings/go/roomchat.h, a link to include/roomchat.h) and from which
// go.work, go.work.sum, testdata folders, *_test.go files and .gitignore are left
// out: what a user's build needs, not the repository's development and tests.
//
//	goproxy -out OUT -version v0.1.0 [-time RFC3339] [mod:]MODULE_PATH=DIR...
//
// A module given as mod:PATH=DIR gets its .mod, .info and list only, no zip: enough
// for the go command to resolve the requirement graph (it fetches the zip of a
// module only when a build needs one of its packages). The test command serves
// the platform modules that only the release workflow builds (macOS, Windows) so.
//
// Prints each module's version and its go.sum hash (h1:).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

func main() {
	out := flag.String("out", "", "the proxy folder to write")
	version := flag.String("version", "", "the version of every module, e.g. v0.1.0")
	stamp := flag.String("time", "", "the version's time (RFC 3339; default now)")
	flag.Parse()
	if *out == "" || *version == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: goproxy -out OUT -version vX.Y.Z [-time RFC3339] MODULE_PATH=DIR...")
		os.Exit(2)
	}
	when := time.Now().UTC()
	if *stamp != "" {
		t, err := time.Parse(time.RFC3339, *stamp)
		if err != nil {
			fail(err)
		}
		when = t.UTC()
	}
	for _, arg := range flag.Args() {
		modOnly := strings.HasPrefix(arg, "mod:")
		path, dir, ok := strings.Cut(strings.TrimPrefix(arg, "mod:"), "=")
		if !ok {
			fail(fmt.Errorf("%q: not MODULE_PATH=DIR", arg))
		}
		if err := write(*out, module.Version{Path: path, Version: *version}, dir, when, modOnly); err != nil {
			fail(fmt.Errorf("%s@%s: %w", path, *version, err))
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "goproxy:", err)
	os.Exit(1)
}

// left out of every module zip
func skipped(rel string, entry fs.DirEntry) bool {
	name := entry.Name()
	if entry.IsDir() {
		return name == "testdata" || strings.HasPrefix(name, ".")
	}
	return name == "go.work" || name == "go.work.sum" || name == ".gitignore" || strings.HasSuffix(name, "_test.go")
}

func write(out string, mv module.Version, dir string, when time.Time, modOnly bool) error {
	if err := module.Check(mv.Path, mv.Version); err != nil {
		return err
	}
	goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	if got := modfile.ModulePath(goMod); got != mv.Path {
		return fmt.Errorf("%s/go.mod declares module %q", dir, got)
	}
	escaped, err := module.EscapePath(mv.Path)
	if err != nil {
		return err
	}
	escapedVersion, err := module.EscapeVersion(mv.Version)
	if err != nil {
		return err
	}
	at := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(at, escapedVersion+".mod"), goMod, 0o644); err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    string
	}{mv.Version, when.Format(time.RFC3339)})
	if err := os.WriteFile(filepath.Join(at, escapedVersion+".info"), append(info, '\n'), 0o644); err != nil {
		return err
	}
	// list: every version of this module in the folder, this one added.
	listPath := filepath.Join(at, "list")
	var versions []string
	if old, err := os.ReadFile(listPath); err == nil {
		versions = strings.Fields(string(old))
	}
	if !slices.Contains(versions, mv.Version) {
		versions = append(versions, mv.Version)
	}
	if err := os.WriteFile(listPath, []byte(strings.Join(versions, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	if modOnly {
		fmt.Printf("%s %s: go.mod only (no zip)\n", mv.Path, mv.Version)
		return nil
	}
	stage, err := os.MkdirTemp("", "goproxy-stage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	if err := copyModule(dir, stage); err != nil {
		return err
	}
	zipPath := filepath.Join(at, escapedVersion+".zip")
	var buf bytes.Buffer
	if err := modzip.CreateFromDir(&buf, mv, stage); err != nil {
		return err
	}
	if err := os.WriteFile(zipPath, buf.Bytes(), 0o644); err != nil {
		return err
	}
	hash, err := dirhash.HashZip(zipPath, dirhash.Hash1)
	if err != nil {
		return err
	}
	fmt.Printf("%s %s: %d bytes, %s\n", mv.Path, mv.Version, buf.Len(), hash)
	return nil
}

// copyModule copies dir into stage: regular files as they are, a symbolic link
// as the file it points to, without what skipped names. Nested modules are
// copied too; modzip leaves them out.
func copyModule(dir, stage string) error {
	return filepath.WalkDir(dir, func(path string, entry fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		if skipped(rel, entry) {
			if entry.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(stage, rel)
		if entry.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := os.Stat(path) // follows a symbolic link
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", path)
		}
		src, err := os.Open(path)
		if err != nil {
			return err
		}
		defer src.Close()
		dst, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(dst, src); err != nil {
			dst.Close()
			return err
		}
		return dst.Close()
	})
}
