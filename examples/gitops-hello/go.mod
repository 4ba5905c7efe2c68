module example.com/gitops-hello

go 1.22
