package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/api"
	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/pullrequest"
)

// runPR is `knit pr`: pull requests without a forge, for knit dev's own
// Git server (or to try a canary by hand). They are the same PullRequest
// resources forge webhooks produce.
func runPR(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		prUsage(stderr)
		return flag.ErrHelp
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("knit pr "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	kubeconfig := fs.String("kubeconfig", defaultKubeconfig(), "kubeconfig of the cluster knit runs on ($KUBECONFIG, else knit dev's .knit/kubeconfig)")
	namespace := fs.String("namespace", "default", "namespace of the GitRepository")
	repo := fs.String("repo", "", "GitRepository the pull request belongs to (required)")
	switch sub {
	case "open":
		head := fs.String("head", "", "branch holding the change (required)")
		base := fs.String("base", "main", "branch the change would merge into")
		canary := fs.Int64("canary", 0, "percent of the base's traffic the head takes while open (0: tag URL only)")
		number := fs.Int64("number", 0, "pull request number; default: the next free one")
		waitFor := fs.Duration("wait", 0, "wait this long for the preview to be ready and print its URL")
		if err := fs.Parse(args); err != nil {
			return err
		}
		if *repo == "" || *head == "" {
			return errors.New("--repo and --head are required")
		}
		if *canary < 0 || *canary > 100 {
			return fmt.Errorf("--canary %d: want a percent from 0 to 100", *canary)
		}
		c, err := prClient(*kubeconfig)
		if err != nil {
			return err
		}
		pr, err := pullrequest.Upsert(ctx, c, pullrequest.Request{
			Repository: types.NamespacedName{Namespace: *namespace, Name: *repo}, Number: *number,
			HeadBranch: *head, BaseBranch: *base, State: knitv1alpha1.PullRequestOpen, Canary: canary,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "pull request %s#%d open: %s → %s, canary %d%%\n", *repo, pr.Spec.Number, *head, *base, pr.Spec.CanaryPercent)
		if *waitFor > 0 {
			return waitPreview(ctx, c, client.ObjectKeyFromObject(pr), *waitFor, stdout)
		}
		fmt.Fprintf(stdout, "watch it with: kubectl get pr %s\n", pr.Name)
		return nil
	case "close", "merge", "status":
		if err := fs.Parse(args); err != nil {
			return err
		}
		if *repo == "" || fs.NArg() != 1 {
			return fmt.Errorf("usage: knit pr %s --repo REPO NUMBER", sub)
		}
		n, err := strconv.ParseInt(fs.Arg(0), 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("pull request number %q: want a positive integer", fs.Arg(0))
		}
		c, err := prClient(*kubeconfig)
		if err != nil {
			return err
		}
		if sub == "status" {
			pr := &knitv1alpha1.PullRequest{}
			if err := c.Get(ctx, types.NamespacedName{Namespace: *namespace, Name: pullrequest.Name(*repo, n)}, pr); err != nil {
				return fmt.Errorf("pull request %s#%d: %w", *repo, n, err)
			}
			printStatus(stdout, pr)
			return nil
		}
		state := knitv1alpha1.PullRequestClosed
		if sub == "merge" {
			state = knitv1alpha1.PullRequestMerged
		}
		key := types.NamespacedName{Namespace: *namespace, Name: pullrequest.Name(*repo, n)}
		pr := &knitv1alpha1.PullRequest{}
		if err := c.Get(ctx, key, pr); err != nil {
			return fmt.Errorf("pull request %s#%d: %w", *repo, n, err)
		}
		pr.Spec.State = state
		if err := c.Update(ctx, pr); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "pull request %s#%d %s: its preview and traffic are being removed\n", *repo, n, state)
		return nil
	case "list":
		if err := fs.Parse(args); err != nil {
			return err
		}
		c, err := prClient(*kubeconfig)
		if err != nil {
			return err
		}
		return listPRs(ctx, c, *namespace, *repo, stdout)
	}
	fmt.Fprintf(stderr, "knit pr: unknown subcommand %q\n\n", sub)
	prUsage(stderr)
	return flag.ErrHelp
}

func defaultKubeconfig() string {
	if k := os.Getenv("KUBECONFIG"); k != "" {
		return k
	}
	return ".knit/kubeconfig"
}

func prUsage(w io.Writer) {
	fmt.Fprint(w, `usage: knit pr <subcommand> [flags]

subcommands:
  open   --repo REPO --head BRANCH [--base main] [--canary PERCENT] [--wait 2m]
  close  --repo REPO NUMBER     remove the preview and its traffic
  merge  --repo REPO NUMBER     mark merged (push the merge to the base branch to deploy it)
  status --repo REPO NUMBER     the preview, the canary's step, share and last verdict, what the forge was told
  list   [--repo REPO]
`)
}

func prClient(kubeconfig string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w (is knit dev running?)", kubeconfig, err)
	}
	scheme, err := api.NewScheme()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// waitPreview waits for the PullRequest to be Ready and prints its URL,
// or says why it is not.
func waitPreview(ctx context.Context, c client.Client, key types.NamespacedName, timeout time.Duration, out io.Writer) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pr := &knitv1alpha1.PullRequest{}
		if err := c.Get(ctx, key, pr); err != nil {
			return false, nil
		}
		ready := pr.Status.GetCondition(duckv1.ConditionReady)
		switch {
		case ready.IsTrue() && pr.Status.URL != "" && pr.Status.RevisionName == "":
			// A head that only adds Services: its preview Services serve.
			fmt.Fprintf(out, "preview ready at %s\n", pr.Status.URL)
			return true, nil
		case ready.IsTrue() && pr.Status.URL != "":
			fmt.Fprintf(out, "preview %s ready at %s\n", pr.Status.RevisionName, pr.Status.URL)
			return true, nil
		case ready.IsFalse():
			return false, fmt.Errorf("preview failed: %s: %s", ready.Reason, ready.Message)
		case ready != nil:
			last = ready.Message
		}
		return false, nil
	})
	if err != nil && last != "" {
		return fmt.Errorf("%w (last: %s)", err, last)
	}
	return err
}

func listPRs(ctx context.Context, c client.Client, namespace, repo string, out io.Writer) error {
	list := &knitv1alpha1.PullRequestList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REPO\tNUMBER\tHEAD\tBASE\tSTATE\tSHARE\tCANARY\tURL")
	for _, pr := range list.Items {
		if repo != "" && pr.Spec.Repository != repo {
			continue
		}
		phase := "–"
		if c := pr.Status.Canary; c != nil {
			phase = fmt.Sprintf("%s %d/%d", c.Phase, c.Step, len(c.Steps))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d%%\t%s\t%s\n", pr.Spec.Repository, pr.Spec.Number, pr.Spec.HeadBranch,
			pr.Spec.BaseBranch, pr.Spec.State, pr.EffectiveShare(), phase, pr.Status.URL)
	}
	return tw.Flush()
}

// printStatus is `knit pr status`: what kubectl get pr shows, spelled out.
func printStatus(w io.Writer, pr *knitv1alpha1.PullRequest) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	line("pull request", fmt.Sprintf("%s#%d %s → %s (%s)", pr.Spec.Repository, pr.Spec.Number, pr.Spec.HeadBranch, pr.Spec.BaseBranch, pr.Spec.State))
	line("title", pr.Spec.Title)
	if ready := pr.Status.GetCondition(duckv1.ConditionReady); ready != nil {
		line("preview", strings.TrimSpace(fmt.Sprintf("%s %s %s", ready.Status, ready.Reason, ready.Message)))
	}
	line("url", pr.Status.URL)
	line("revision", pr.Status.RevisionName)
	line("share", fmt.Sprintf("%d%% of %s's traffic", pr.EffectiveShare(), orNone(pr.Status.BaseService)))
	if c := pr.Status.Canary; c != nil {
		line("canary", fmt.Sprintf("%s, step %d of %v every %s (from the %s)", c.Phase, c.Step, c.Steps, c.Interval.Duration, c.Source))
		line("verdict", strings.TrimSpace(c.Verdict+" "+c.Message))
	}
	if f := pr.Status.GetCondition(knitv1alpha1.PullRequestConditionForgeReported); f != nil {
		line("forge", strings.TrimSpace(fmt.Sprintf("%s %s %s", f.Status, f.Reason, f.Message)))
	}
	tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "the base Service"
	}
	return s
}
