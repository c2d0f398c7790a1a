package replay

import "github.com/hale-lang/hale/codegen/image"

// Test-only access for the external tests of this package.
var ReplayHeader = replayHeader

// programTypesOf is the header type table of img.
func programTypesOf(img *image.Image) ([]byte, error) {
	pt, err := typesOfProgram(img)
	if err != nil {
		return nil, err
	}
	return pt.encode()
}
