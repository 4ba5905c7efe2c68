package gitserver

import "context"

// TokenKey is the key of a Secret holding a Git server's token.
const TokenKey = "token"

// StaticToken is a Token that never changes: knit dev's, generated once
// and kept in its state directory.
func StaticToken(token string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return token, nil }
}
