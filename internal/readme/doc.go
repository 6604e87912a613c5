// Package readme holds the test that runs the runnable examples of the
// README and of every page in docs/: the blocks fenced as "```sh runnable",
// top to bottom, each page in a scratch directory of its own (holding the
// repository's testdata/demo.aaep), with the commands built once and first
// in PATH. A command's exit status is 0 unless its comment says "(exit N)".
// A command that ends in "&" (before its comment) runs in the background,
// as in a shell, until the page's last block has run. It has no code of its
// own.
package readme
