// Package replay is the runtime side of recording and replay: it connects
// a running program (package vm/host) to the artifact format (package
// replay/artifact).
//
// Recording. StartRecording reads LOTUS_OBS_RECORD and, when it is set,
// creates the recorder and returns a RecordingJournal, which plugs into
// the runtime's journal seam (vm/host.Journal) and turns every event of a
// live run into entries. NewHeader builds the header from the program
// image: the consumer table, and the type table that lets `hale trace
// dump` decode values without the program.
//
// Replaying. Run is the replay session behind `hale replay`: it runs the
// program under a Replayer, records the replay when asked (or when it
// must show both sides of a divergence), compares the two artifacts and
// returns the Report. Replayer is the runtime's Journal, Order and Input
// during a replay: it serves recorded results, holds early deliveries and
// injects recorded stdin (replayer.go explains how); at a coordinate
// (`--at`) it stops and captures the AtView there. The interactive
// inspector is a client of package replay/debug.
//
// This package knows the program only through its image (codegen/image):
// names, topology and value types (vm.Types), and the standard library's
// primitive table.
package replay
