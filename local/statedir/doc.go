// Package statedir guards knit dev's state directory. Two knit dev
// processes on one directory would start two etcds on the same data and
// corrupt it, so the second one must fail at once, with a message that
// says which process holds the directory.
package statedir
