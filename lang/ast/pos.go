// Package ast defines the syntax tree of Hale programs, the positions that
// every node carries, and the semantic annotations (types and symbols) that
// the checker attaches to the tree.
//
// The parser (package lang/syntax) builds the tree; the checker (package
// lang/check) resolves every name to a Symbol, gives every expression a
// Type, and assigns slots; later phases (effects, sir) read the annotated
// tree and never look a name up again.
package ast

import "fmt"

// Pos is a position in a source file. File is the logical path (relative to
// the entry file's folder, with '/' separators); Line and Col count from 1,
// Col in bytes. Offset is the byte offset from the start of the file.
type Pos struct {
	File   string
	Offset int
	Line   int
	Col    int
}

// String formats the position as file:line:col, or as just the file when
// the position names a whole file (Line 0, e.g. a file that cannot be read).
func (p Pos) String() string {
	if p.Line == 0 && p.File != "" {
		return p.File
	}
	if p.File == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// IsValid reports whether the position was set.
func (p Pos) IsValid() bool { return p.Line > 0 }

// Span is the source extent of a node: From is its first byte, To is just
// past its last byte. Every node embeds one.
type Span struct {
	From Pos
	To   Pos
}

// Pos returns the start of the node.
func (s Span) Pos() Pos { return s.From }

// End returns the position just past the node.
func (s Span) End() Pos { return s.To }

// Node is implemented by every syntax tree node.
type Node interface {
	Pos() Pos
	End() Pos
}
