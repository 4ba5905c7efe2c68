package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
)

// nginxConf is nginx as a Host-routing reverse proxy in its best
// configuration for kept-alive load, fair to knit's ingress beside it:
// a worker per CPU, no access log, upstream connections kept alive
// (HTTP/1.1 with Connection cleared, as nginx's documentation asks for
// keepalive), the same forwarding headers knit's edge sets, TLS pinned to
// X25519 as the ingress is, h2 offered by ALPN, and a default server
// answering 404 for any other Host.
var nginxConf = template.Must(template.New("nginx").Parse(`daemon off;
master_process on;
worker_processes auto;
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/nginx-error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path {{.Dir}}/body;
	proxy_temp_path {{.Dir}}/proxy;
	fastcgi_temp_path {{.Dir}}/fastcgi;
	uwsgi_temp_path {{.Dir}}/uwsgi;
	scgi_temp_path {{.Dir}}/scgi;
	ssl_protocols TLSv1.2 TLSv1.3;
	ssl_ecdh_curve X25519;
	upstream knit_queue {
		server {{.Upstream}};
		keepalive 256;
	}
	server {
		listen {{.Listen}} default_server;
		listen {{.ListenTLS}} ssl http2 default_server;
		ssl_certificate {{.Cert}};
		ssl_certificate_key {{.Key}};
		return 404;
	}
	server {
		listen {{.Listen}};
		listen {{.ListenTLS}} ssl http2;
		server_name {{.Host}};
		ssl_certificate {{.Cert}};
		ssl_certificate_key {{.Key}};
		location / {
			proxy_pass http://knit_queue;
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host $http_host;
			proxy_set_header X-Forwarded-For $remote_addr;
			proxy_set_header X-Forwarded-Host $http_host;
			proxy_set_header X-Forwarded-Proto $scheme;
		}
	}
}
`))

// nginxSettings fill nginxConf.
type nginxSettings struct {
	Dir, Upstream, Listen, ListenTLS, Cert, Key, Host string
}

// nginxCommand writes nginx's configuration into dir and returns the
// command that runs it in the foreground, or why nginx cannot run here.
func nginxCommand(s nginxSettings) (*exec.Cmd, string) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/sbin/nginx"} {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
				break
			}
		}
	}
	if err != nil {
		return nil, "nginx is not installed (`make host-packages` installs Debian's, as root)"
	}
	var conf bytes.Buffer
	if err := nginxConf.Execute(&conf, s); err != nil {
		return nil, fmt.Sprintf("nginx configuration: %v", err)
	}
	path := filepath.Join(s.Dir, "nginx.conf")
	if err := os.WriteFile(path, conf.Bytes(), 0o644); err != nil {
		return nil, fmt.Sprintf("nginx configuration: %v", err)
	}
	// The workers run as nobody and read nothing but what the master
	// opened; the temporary directories must be theirs to write.
	os.Chmod(s.Dir, 0o755)
	return exec.Command(bin, "-p", s.Dir, "-c", path), ""
}

// nginxVersion is what `nginx -v` says, for the report.
func nginxVersion(cmd *exec.Cmd) string {
	out, err := exec.Command(cmd.Path, "-v").CombinedOutput()
	if err != nil {
		return "nginx"
	}
	_, v, ok := strings.Cut(strings.TrimSpace(string(out)), "version: ")
	if !ok {
		return "nginx"
	}
	return v
}

// childPIDs are the processes whose parent is pid (nginx's workers).
func childPIDs(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		end := bytes.LastIndexByte(stat, ')')
		if end < 0 {
			continue
		}
		f := bytes.Fields(stat[end+1:]) // f[1] is field 4, the parent
		if len(f) > 1 && string(f[1]) == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}
