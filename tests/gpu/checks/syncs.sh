# Host waits as sync records from gpuperf's own callbacks (src/inject/cupti/host_waits.h)
# against CUPTI's SYNCHRONIZATION kind (GPUPERF_API_SOURCE=cupti takes them from it) on the
# same examples: as many waits of each kind, stream waits on the same streams, and every
# callback record on a thread, with its call's launch link.
syncs_check() {
  local problems=() checked=0 name way
  # kind=... and, for a stream wait, its stream: one line per record, sorted.
  sync_keys() {
    sed -n 's/^sync .* kind=\([a-z_]*\) .* stream_id=\([0-9]*\) .*/\1 \2/p' "$1" |
      awk '{print ($1 == "stream_synchronize" || $1 == "stream_wait_event") ? $1 " " $2 : $1}' | sort
  }
  for name in multi_stream driver_launch mock_transformer; do
    [[ -x $ex/$name ]] || { problems+=("$name: not built"); continue; }
    for way in callbacks cupti; do
      local dir=$work/syncs_${name}_$way
      GPUPERF_API_SOURCE=$way timeout 300 "$gp" record -o "$dir" --force -- "$ex/$name" \
        > "$dir.log" 2>&1 || problems+=("$name $way: exit $?")
      "$gp" dump "$dir" 2>/dev/null > "$dir.dump"
      grep '^sync ' "$dir.dump" > "$dir.syncs"
    done
    local ours=$work/syncs_${name}_callbacks theirs=$work/syncs_${name}_cupti
    local n_ours n_theirs
    n_ours=$(wc -l < "$ours.syncs"); n_theirs=$(wc -l < "$theirs.syncs")
    echo "   syncs $name: callbacks $n_ours, CUPTI's kind $n_theirs" >> "$results"
    [[ $n_ours -gt 0 ]] || problems+=("$name: no sync record from the callbacks")
    diff <(sync_keys "$ours.syncs") <(sync_keys "$theirs.syncs") > "$work/syncs_$name.diff" ||
      problems+=("$name: kinds or streams differ ($(head -c 200 "$work/syncs_$name.diff" | tr '\n' ' '))")
    grep -q ' tid=0 ' "$ours.syncs" && problems+=("$name: a callback sync record without its thread")
    # multi_stream makes a stream wait for another's event once a batch.
    [[ $name != multi_stream ]] || grep -q 'kind=stream_wait_event' "$ours.syncs" ||
      problems+=("$name: no stream wait for an event from the callbacks")
    # Every CPU wait's correlation id has a launch link with a stack (a stream's wait has none).
    local unlinked
    unlinked=$(awk 'NR == FNR {
                      if ($1 != "launch_link") next
                      for (i = 1; i <= NF; ++i) { if ($i ~ /^correlation_id=/) c = $i; if ($i ~ /^stack_id=/) s = $i }
                      if (s != "stack_id=0") linked[c] = 1
                      next
                    }
                    $1 == "sync" && !/ kind=stream_wait_event / {
                      for (i = 1; i <= NF; ++i) if ($i ~ /^correlation_id=/ && !($i in linked)) ++n
                    }
                    END { print n + 0 }' "$ours.dump" "$ours.dump")
    [[ $unlinked -eq 0 ]] || problems+=("$name: $unlinked waits without a stack")
    checked=$((checked + n_ours))
  done
  note syncs "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-$checked waits from callbacks, the same kinds and streams as the records of CUPTI}"
}
