module github.com/hale-lang/hale

go 1.26.8

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/google/go-dap v0.12.0
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/tetratelabs/wazero v1.12.0
	github.com/zeebo/blake3 v0.2.4
	golang.org/x/sys v0.44.0
	golang.org/x/term v0.42.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/cpuid/v2 v2.0.12 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
