// Package readme holds the test that runs the README's runnable examples:
// the blocks fenced as "```sh runnable", top to bottom, in a scratch
// directory, with the commands built once and first in PATH. A command's
// exit status is 0 unless its comment says "(exit N)". It has no code of
// its own.
package readme
