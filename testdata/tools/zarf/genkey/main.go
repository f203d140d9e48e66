// Command genkey writes a cosign key pair (cosign.key, encrypted with the
// password in COSIGN_PASSWORD, and cosign.pub) into the directory given,
// as `cosign generate-key-pair` and `zarf tools gen-key` do, without their
// terminal prompt. The signed test fixtures are made with it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sigstore/cosign/v3/pkg/cosign"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: COSIGN_PASSWORD=... genkey DIR")
		os.Exit(2)
	}
	keys, err := cosign.GenerateKeyPair(func(bool) ([]byte, error) { return []byte(os.Getenv("COSIGN_PASSWORD")), nil })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir := os.Args[1]
	if err := os.WriteFile(filepath.Join(dir, "cosign.key"), keys.PrivateBytes, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join(dir, "cosign.pub"), keys.PublicBytes, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
