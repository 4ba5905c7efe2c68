// Command broken does not compile, so that the runtime's tests can see a
// BuildFailed.
package main

func main() {
	undefinedFunction()
}
