package check

import (
	"testing"

	"github.com/hale-lang/hale/lang/ast"
)

// TestRefuseSecretType: the type-only form of the secret rule, for the
// target type of a decode.
func TestRefuseSecretType(t *testing.T) {
	c := &checker{}
	c.declareSecretType()
	holder := &ast.Type{Kind: ast.Struct, Name: "Holder", Fields: []*ast.Field{{Name: "k", Type: ast.ListOf(c.secretType)}}}
	if c.refuseSecretType(ast.Pos{Line: 1, Col: 1}, ast.MapOf(ast.StringType, ast.IntType), "cannot be decoded from JSON") {
		t.Error("refused a type without a secret")
	}
	if !c.refuseSecretType(ast.Pos{Line: 2, Col: 1}, holder, "cannot be decoded from JSON") || len(c.errs) != 1 ||
		c.errs[0].Msg != "type Holder holds a secret, and it cannot be decoded from JSON: a secret's value is never readable by the program" {
		t.Errorf("errors: %v", c.errs)
	}
}
