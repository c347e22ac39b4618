#!/usr/bin/awk -f
# side-by-side.sh's summary: reads the "figure<TAB>key<TAB>value" lines of two berth-bench outputs
# (containerd's first, berth's second) and prints one table row per figure: both values and the
# ratio berth/containerd. A latency whose calls failed says how many; all failed reads "n/a".
# Usage: side-by-side-table.awk <containerd output> <berth output>
BEGIN { FS = "\t" }
$1 == "figure" { v[FILENAME == ARGV[1] ? 1 : 2, $2] = $3; seen[$2] = 1 }

function cell(side, key,    base, fails, calls) {
  if (!((side, key) in v)) return "-"
  base = key
  sub(/\.p[0-9]+_ms$/, "", base)
  fails = v[side, base ".failures"] + 0
  calls = v[side, base ".calls"] + 0
  if (fails > 0 && fails >= calls) return "n/a (failed)"
  return sprintf("%.2f", v[side, key]) (fails > 0 ? sprintf(" (%d failed)", fails) : "")
}

function show(label, key,    a, b, ratio) {
  if (!(key in seen)) return
  a = cell(1, key)
  b = cell(2, key)
  ratio = (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/ && a + 0 > 0) ? sprintf("%.2f", b / a) : ""
  printf "| %-62s | %14s | %14s | %6s |\n", label, a, b, ratio
}

END {
  printf "\n| %-62s | %14s | %14s | %6s |\n", "figure", "containerd", "berth", "ratio"
  printf "|%s|%s|%s|%s|\n", "----------------------------------------------------------------", "----------------",
         "----------------", "--------"
  show("RunPodSandbox (CNI bridge) p50 ms", "lifecycle.RunPodSandbox.p50_ms")
  show("CreateContainer + StartContainer p50 ms", "lifecycle.CreateContainer+StartContainer.p50_ms")
  show("RunPodSandbox + CreateContainer + StartContainer p50 ms", "lifecycle.RunPodSandbox+CreateContainer+StartContainer.p50_ms")
  show("StopContainer (timeout 0) p50 ms", "lifecycle.StopContainer.p50_ms")
  show("RemoveContainer (after StopPodSandbox, kubelet's GC) p50 ms", "lifecycle.RemoveContainer.p50_ms")
  show("RemoveContainer right after StopContainer p50 ms", "lifecycle.RemoveContainer after StopContainer.p50_ms")
  show("PodSandboxStatus verbose (crictl inspectp) p50 ms", "lifecycle.PodSandboxStatus verbose.p50_ms")
  show("StopPodSandbox p50 ms", "lifecycle.StopPodSandbox.p50_ms")
  show("RemovePodSandbox p50 ms", "lifecycle.RemovePodSandbox.p50_ms")
  show("ExecSync /bin/true p50 ms", "lifecycle.ExecSync.p50_ms")
  show("daemon RSS idle, before any pull, MiB", "idle.daemon_rss_mib")
  show("daemon RSS after 8 pulls + 1 re-pull of a stored image, MiB", "pulls.daemon_rss_mib")
  show("memory per pod, daemon + helpers RSS, MiB (lifecycle)", "lifecycle.per_pod_rss_mib")
  show("memory per pod, daemon + helpers Pss, MiB (lifecycle)", "lifecycle.per_pod_pss_mib")
  show("steady state: pods running", "steady.pods")
  show("steady state: runtime CPU, % of one core", "steady.cpu_percent")
  show("steady state: daemon CPU, %", "steady.daemon_cpu_percent")
  show("steady state: helpers CPU, %", "steady.helpers_cpu_percent")
  show("steady state: daemon RSS MiB", "steady.daemon_rss_mib")
  show("steady state: helpers RSS MiB", "steady.helpers_rss_mib")
  show("steady state: helpers Pss MiB", "steady.helpers_pss_mib")
  split("ListPodSandbox ListContainers PodSandboxStatus ContainerStatus ListContainerStats ListPodSandboxStats " \
        "ImageFsInfo ExecSync Status", calls, " ")
  for (i = 1; i <= 9; i++) {
    show("steady state: " calls[i] " p50 ms", "steady." calls[i] ".p50_ms")
    show("steady state: " calls[i] " p99 ms", "steady." calls[i] ".p99_ms")
  }
  show("density: pods running", "density.pods")
  show("density: time to start them all, s", "density.start_s")
  show("density: time to remove them all, s", "density.remove_s")
  show("density: daemon + helpers RSS MiB", "density.runtime_rss_mib")
  show("density: daemon RSS MiB", "density.daemon_rss_mib")
  show("density: helpers RSS MiB", "density.helpers_rss_mib")
  show("density: helpers Pss MiB", "density.helpers_pss_mib")
  show("density: memory per pod, daemon + helpers RSS, MiB", "density.per_pod_rss_mib")
  show("density: memory per pod, daemon + helpers Pss, MiB", "density.per_pod_pss_mib")
  show("density: ListContainers p50 ms", "density.ListContainers.p50_ms")
  show("density: ListContainerStats p50 ms", "density.ListContainerStats.p50_ms")
  show("density: ListPodSandbox p50 ms", "density.ListPodSandbox.p50_ms")
}
