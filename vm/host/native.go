package host

import (
	"errors"

	"github.com/hale-lang/hale/codegen/image"
	"github.com/hale-lang/hale/vm"
)

// nativeEngine runs vm.Machine in-process. Like the guest, it turns a Go
// panic in the interpreter into an error, so both engines fail alike.
type nativeEngine struct {
	m *vm.Machine
}

func newNative(img *image.Image, host vm.Host, memLimit int64) (Engine, error) {
	m, err := newNativeMachine(img, host, memLimit)
	if err != nil {
		return nil, err
	}
	return &nativeEngine{m: m}, nil
}

// newNativeMachine makes a machine for img with the memory limit (host
// may be nil for a template of siblings, which never runs).
func newNativeMachine(img *image.Image, host vm.Host, memLimit int64) (_ *vm.Machine, err error) {
	defer recoverError(&err)
	if host == nil {
		host = noHost{}
	}
	m, err := vm.New(img, host)
	if err != nil {
		return nil, err
	}
	m.SetMemoryLimit(memLimit)
	return m, nil
}

// newNativeSibling makes a native engine whose machine is a sibling of
// template (vm.Machine.Sibling) serving host.
func newNativeSibling(template *vm.Machine, host vm.Host, memLimit int64) Engine {
	m := template.Sibling(host)
	m.SetMemoryLimit(memLimit)
	return &nativeEngine{m: m}
}

// noHost is the host of a template machine, which never runs.
type noHost struct{}

func (noHost) Prim(uint16, []byte) ([]byte, error) {
	return nil, errors.New("interpreter: a template machine ran")
}

func (e *nativeEngine) Init(inst int) (err error) {
	defer recoverError(&err)
	return e.m.Init(inst)
}

func (e *nativeEngine) Deliver(inst, handler int, payload []byte) (err error) {
	defer recoverError(&err)
	return e.m.Deliver(inst, handler, payload)
}

func (e *nativeEngine) State(inst int) (b []byte, err error) {
	defer recoverError(&err)
	return e.m.State(inst)
}

func (e *nativeEngine) Params(inst int) (b []byte, err error) {
	defer recoverError(&err)
	return e.m.Params(inst)
}

func (e *nativeEngine) SetGuardParams(table [][]byte) (err error) {
	defer recoverError(&err)
	return e.m.SetGuardParams(table)
}

func (e *nativeEngine) Guards(topic int, payload []byte) (b []byte, err error) {
	defer recoverError(&err)
	return e.m.Guards(topic, payload)
}

// SetBreaks arms a debugger's breaks (vm.Machine.SetBreaks).
func (e *nativeEngine) SetBreaks(spec []byte) (err error) {
	defer recoverError(&err)
	return e.m.SetBreaks(spec)
}

func (e *nativeEngine) Close() error { return nil }

// recoverError turns a panic into an error worded as the guest words it.
func recoverError(err *error) {
	if p := recover(); p != nil {
		msg := "interpreter: internal error"
		switch v := p.(type) {
		case error:
			msg += ": " + v.Error()
		case string:
			msg += ": " + v
		}
		*err = errors.New(msg)
	}
}
