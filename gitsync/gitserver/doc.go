// Package gitserver is the Git server of `knit dev`: it serves bare
// repositories over Git's smart HTTP protocol on loopback, so that a
// developer deploys with a plain `git push`, and tells knit what each push
// changed.
//
// # Access
//
// A push deploys code that knit runs, so nothing is served anonymously:
//
//   - The Host header must name the server (Options.Hosts, the loopback
//     names, and any IP address with Options.AnyIPHost), else 421: a
//     browser page whose name was rebound to the server's address names
//     its own host.
//   - On a cluster the server speaks HTTPS only (TLSConfig, knit
//     gitserver --tls-cert-file): the token every request carries opens
//     every repository, so it crosses the network in clear text only on
//     loopback (knit dev) or where the operator passed --plain-http.
//   - Each repository belongs to one namespace (Owners): the server's
//     users (knit's hub and controller) sync and fetch it only for
//     GitRepositories of that namespace.
//   - Every request, fetch or push, must carry Options.Token as the Basic
//     password (any user name) or as a bearer token, else 401 with a Basic
//     challenge, which makes git retry with the password of its URL or
//     its credential helper. Nothing is stored, created or told before.
//
// # Protocol
//
// Git itself does the protocol work: each request runs `git http-backend`
// through net/http/cgi, with receive-pack enabled and every repository
// exported. The server only routes, validates and bounds requests:
//
//   - /git/<name>.git/info/refs, /git/<name>.git/git-upload-pack and
//     /git/<name>.git/git-receive-pack (the ".git" is optional) are the only
//     URLs served; the dumb protocol is not.
//   - <name> must be a DNS-1123 label (ValidateName): it names the
//     repository directory <Root>/<name>.git and, later, Kubernetes objects.
//     Anything else is a 400.
//   - The first push to a name creates the repository (git init --bare,
//     default branch main) when its pack arrives: the ref advertisement
//     that precedes it is the one of an empty repository, made up without
//     touching the disk, and a push that stored no ref leaves no
//     repository behind. Fetching or cloning a name nobody pushed is a
//     404 that says so.
//   - receive-pack checks every object a push brings (receive.fsckObjects)
//     and refuses the push if one is malformed.
//   - Request bodies are bounded by Options.MaxPushBytes, after gzip
//     decoding (git compresses fetch negotiations). Chunked bodies, which
//     git uses for pushes over 1 MiB, are streamed to http-backend. A push
//     over the limit is refused in receive-pack's words, which `git push`
//     shows (the limit, how to raise it, every ref rejected), and nothing
//     of it is stored (refuse.go).
//   - git runs from an argument vector with a fixed environment: no shell,
//     no system or global git configuration, nothing from the request but
//     CGI's HTTP_* variables.
//
// # Push notifications
//
// A receive-pack request holds a per-repository lock while it runs; the
// refs are read before and after it, and the difference (created, moved
// and deleted refs, Push.Updates) goes to Options.OnPush. By default
// OnPush runs after the response is complete, so `git push` never waits
// for knit's sync; calls for one repository come one at a time in push
// order, on a context that Close cancels. With Options.WaitForOnPush the
// push instead waits for OnPush to return (its outcome cannot reach the
// client: the response is written by then). Reading refs rather than
// parsing the request means a rejected update is never reported and an
// update is reported even when the client hung up before the end.
package gitserver
