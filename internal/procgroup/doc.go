// Package procgroup starts a child process in a process group of its own and
// stops the group: so that stopping a child also stops what it started, and
// a terminal's Ctrl-C reaches only the parent, which then stops the child in
// order. Where the system has no process groups (Windows), only the child
// is stopped, and Interrupt is a kill.
package procgroup
