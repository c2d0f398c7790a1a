//go:build !linux

package pages

func prepare([]byte) {}
