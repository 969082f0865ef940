package roomchat_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// readmeImports are the packages a README snippet may use, by the name it uses.
var readmeImports = map[string]string{
	"context": "context", "errors": "errors", "fmt": "fmt", "log": "log", "slog": "log/slog",
	"os": "os", "strings": "strings", "time": "time", "testing": "testing", "http": "net/http",
	"roomchat": "github.com/roomchat/roomchat-go", "roomchattest": "github.com/roomchat/roomchat-go/roomchattest",
}

var (
	readmeBlock    = regexp.MustCompile("(?s)(?:<!-- go: (fragment[^\n]*?) -->\n)?```go\n(.*?)```")
	readmeFragment = regexp.MustCompile(`^fragment(\(.*\)(?: [^ ].*)?)$`)
)

// readmeFile is a README snippet as a Go file of package pkg: a fragment (a
// function's statements) inside a function of the signature its marker gives,
// top-level declarations as they are, and the imports of the packages it uses.
func readmeFile(pkg, signature, code string, n int) string {
	body := code
	if signature != "" {
		lines := strings.Split(strings.TrimRight(code, "\n"), "\n")
		last := strings.TrimSpace(lines[len(lines)-1])
		if strings.HasSuffix(signature, " error") && !strings.HasPrefix(last, "return") {
			code += "return nil\n"
		}
		body = fmt.Sprintf("func snippet%d%s {\n%s}\n", n, signature, code)
	}
	var imports []string
	for name, path := range readmeImports {
		if regexp.MustCompile(`\b` + name + `\.`).MatchString(body) {
			imports = append(imports, fmt.Sprintf("\t%q\n", path))
		}
	}
	sort.Strings(imports)
	return fmt.Sprintf("package %s\n\nimport (\n%s)\n\n%s", pkg, strings.Join(imports, ""), body)
}

// Every ```go block of README.md compiles, as a user would write it: a whole
// program as printed (its own package main), a test function in a _test.go
// file, and a fragment (the statements of a function, after a
// `<!-- go: fragment(PARAMS) RESULTS -->` marker naming what it is given) in a
// function of that signature, with the imports of the packages it names; then
// go vet checks them. The quickstart also runs in the clean room (go.sh).
func TestReadmeSnippetsCompile(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	// A folder of the module, so that the snippets see it and the workspace's
	// platform modules; `_` keeps it out of ./... patterns should it be left behind.
	dir, err := os.MkdirTemp(".", "_readme_snippets_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	packages := []string{"./" + filepath.ToSlash(dir)}
	blocks := readmeBlock.FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 5 {
		t.Fatalf("%d go blocks in README.md", len(blocks))
	}
	for n, block := range blocks {
		marker, code := block[1], block[2]
		var name, text string
		switch {
		case strings.HasPrefix(code, "package "):
			sub := filepath.Join(dir, fmt.Sprintf("program%d", n))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			name, text = filepath.Join(sub, "main.go"), code
			packages = append(packages, "./"+filepath.ToSlash(sub))
		case marker != "":
			m := readmeFragment.FindStringSubmatch(marker)
			if m == nil {
				t.Fatalf("README go block %d: a marker %q, not fragment(PARAMS) RESULTS", n+1, marker)
			}
			name, text = filepath.Join(dir, fmt.Sprintf("snippet%d.go", n)), readmeFile("snippets", m[1], code, n)
		case strings.HasPrefix(code, "func Test"):
			name, text = filepath.Join(dir, fmt.Sprintf("snippet%d_test.go", n)), readmeFile("snippets", "", code, n)
		case strings.HasPrefix(code, "func ") || strings.HasPrefix(code, "type ") || strings.HasPrefix(code, "var "):
			name, text = filepath.Join(dir, fmt.Sprintf("snippet%d.go", n)), readmeFile("snippets", "", code, n)
		default:
			t.Fatalf("README go block %d is statements without a <!-- go: fragment(PARAMS) RESULTS --> marker before it:\n%s", n+1, code)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A package of the test files alone is fine for vet; give it one non-test file all the same.
	if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte("// Package snippets is README.md's Go snippets (TestReadmeSnippetsCompile).\npackage snippets\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	goCommand, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	vet := exec.Command(goCommand, append([]string{"vet"}, packages...)...)
	if out, err := vet.CombinedOutput(); err != nil {
		var files strings.Builder
		entries, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		more, _ := filepath.Glob(filepath.Join(dir, "*", "*.go"))
		for _, f := range append(entries, more...) {
			text, _ := os.ReadFile(f)
			fmt.Fprintf(&files, "--- %s\n%s\n", f, numbered(string(text)))
		}
		t.Fatalf("go vet of README.md's snippets: %v\n%s\n%s", err, out, files.String())
	}
}

// numbered is text with its line numbers, as go vet's messages cite them.
func numbered(text string) string {
	lines := strings.Split(text, "\n")
	for i := range lines {
		lines[i] = fmt.Sprintf("%3d  %s", i+1, lines[i])
	}
	return strings.Join(lines, "\n")
}
