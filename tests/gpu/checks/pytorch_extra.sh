# PyTorch beyond eager launches (issue 12, "PyTorch specifics"; sourced by tests/gpu/run.sh),
# three short recordings under gpuperf's defaults (about a minute and a half):
#   tiny     examples/pytorch_transformer.py, 2 layers of dim 64, 3 steps: every kernel
#            joined, the model's forward functions with file:line, no interpreter frames;
#            kept as a CI fixture (< 400 KB, with PROVENANCE) in
#            $out/pytorch_extra/pytorch_tiny_fixture.tar.gz, for tests/data/h100/pytorch_tiny/
#            (tests/e2e/pytorch_fixture_test.sh renders it)
#   compile  tests/gpu/torch_compile_run.py --mode compile: Inductor's Triton kernels, whose
#            stacks must hold a frame of the generated wrapper code (/tmp/torchinductor_*/c*.py,
#            shown as file:line) and the script's own step() line
#   graphs   --mode graphs, torch.compile(mode="reduce-overhead"): kernels of CUDA graph
#            replays keep the replay's stack: cudaGraphLaunch's, with step()'s line
# Writes $out/pytorch_extra/: NAME.folded, NAME.top.txt (heaviest stacks), NAME.python.txt
# (the Python frames seen, by weight), NAME.out/.err, and the fixture tarball.
pytorch_extra_check() {
  local dir=$out/pytorch_extra rec=$work/rec/pytorch_extra problems=() infos=()
  mkdir -p "$dir" "$rec"
  echo "== pytorch_extra: a tiny eager fixture, torch.compile, reduce-overhead CUDA graphs" |
    tee -a "$results"
  if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    note pytorch_extra FAIL "no torch with CUDA"
    return
  fi
  # px_record NAME CMD...: record, flame graph, the heaviest stacks and the Python frames.
  px_record() {
    local name=$1; shift
    timeout 300 "$gp" record -o "$rec/$name" --force -- "$@" > "$dir/$name.out" 2> "$dir/$name.err"
    local rc=$?
    echo "   $name: exit $rc, $(grep -h 'gpuperf-example:' "$dir/$name.out" | head -1)" | tee -a "$results"
    [[ $rc -eq 0 ]] || { problems+=("$name: record exit $rc"); return 1; }
    "$gp" flamegraph --folded -o "$dir/$name.folded" "$rec/$name" 2> "$dir/$name.flame.err"
    awk '{print $NF "\t" $0}' "$dir/$name.folded" | sort -t$'\t' -k1,1nr | head -15 | cut -f2- \
      > "$dir/$name.top.txt"
    grep -o '[^;]* ([^;()]*\.py:[0-9]*)' "$dir/$name.folded" | sort | uniq -c | sort -rn \
      > "$dir/$name.python.txt"
    local joined; joined=$(joined_of "$dir/$name.flame.err")
    all_joined "$joined" ||
      problems+=("$name: not every kernel joined (${joined:-none})")
    grep -q '_PyEval_EvalFrameDefault\|python3\.[0-9]*+0x\|libpython[^;]*+0x' "$dir/$name.folded" &&
      problems+=("$name: interpreter frames in the default flame graph")
    return 0
  }
  # "torch_compile_run.py:N" for the line marked "# line:NAME".
  px_line() { echo "torch_compile_run.py:$(grep -n "# line:$1\$" "$src/tests/gpu/torch_compile_run.py" | cut -d: -f1)"; }

  # --- tiny: eager inference, the fixture -----------------------------------------------------
  local tiny=(python3 "$src/examples/pytorch_transformer.py" --steps 3 --warmup 1 --batch 2
              --seq 32 --dim 64 --heads 4 --layers 2 --vocab 256)
  if px_record tiny "${tiny[@]}"; then
    local own; own=$(grep -o '[A-Za-z_.]*forward (pytorch_transformer\.py:[0-9]*)' "$dir/tiny.folded" | sort -u)
    [[ $(grep -c . <<<"$own") -ge 3 ]] || problems+=("tiny: fewer than 3 forward frames with file:line")
    local saved
    if saved=$(save_fixture pytorch_tiny "$rec/tiny" "$dir/pytorch_tiny_fixture.tar.gz" "$dir/tiny.out" "${tiny[@]}"); then
      infos+=("$saved")
    else
      problems+=("tiny: $saved")
    fi
  fi

  # --- compile: Inductor / Triton ---------------------------------------------------------------
  if px_record compile python3 "$src/tests/gpu/torch_compile_run.py" --mode compile; then
    local triton generated stepped
    triton=$(grep -c '\[GPU[0-9]*\] triton_' "$dir/compile.folded")
    generated=$(grep '\[GPU[0-9]*\] triton_' "$dir/compile.folded" | grep -c '(c[a-z0-9]*\.py:[0-9]*)')
    stepped=$(grep '\[GPU[0-9]*\] triton_' "$dir/compile.folded" | grep -c "step ($(px_line step))")
    [[ $triton -gt 0 ]] || problems+=("compile: no Triton kernels")
    [[ $generated -eq $triton ]] ||
      problems+=("compile: $generated of $triton Triton kernel stacks show the generated code")
    [[ $stepped -eq $triton ]] || problems+=("compile: $stepped of $triton Triton kernel stacks show step()")
    local user; user=$(grep '\[GPU[0-9]*\] triton_' "$dir/compile.folded" |
      grep -o 'forward (torch_compile_run\.py:[0-9]*)' | sort -u | tr '\n' ' ')
    infos+=("compile: $triton Triton kernel stacks; the model's lines under Dynamo: ${user:-none}")
  fi

  # --- graphs: torch.compile(mode="reduce-overhead") ------------------------------------------
  if px_record graphs python3 "$src/tests/gpu/torch_compile_run.py" --mode graphs; then
    local replayed launched stepped
    replayed=$(grep -c ';\[graph [0-9]*\];' "$dir/graphs.folded")
    launched=$(grep ';\[graph [0-9]*\];' "$dir/graphs.folded" | grep -c ';cu[A-Za-z]*GraphLaunch[^;]*;\[graph')
    stepped=$(grep ';\[graph [0-9]*\];' "$dir/graphs.folded" | grep -c "step ($(px_line step))")
    [[ $replayed -gt 0 ]] || problems+=("graphs: no kernels from graph launches")
    [[ $launched -eq $replayed ]] ||
      problems+=("graphs: $launched of $replayed graph kernel stacks end in a graph launch")
    [[ $stepped -eq $replayed ]] || problems+=("graphs: $stepped of $replayed graph kernel stacks show step()")
    infos+=("graphs: $replayed graph kernel stacks")
  fi
  local line
  for line in "${infos[@]}"; do echo "   $line"; done | tee -a "$results"
  for line in "${problems[@]}"; do echo "   problem: $line"; done | tee -a "$results"
  note pytorch_extra "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-${infos[*]}}"
}
