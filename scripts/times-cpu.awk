# The CPU seconds (user + system, whole) of the processes a shell has waited for, from
# the output of bash's `times` (its second line: "0m12.345s 0m1.234s"). Used by
# scripts/test-all.sh (each step's header) and scripts/background-builds.sh (each job's cost).
NR == 2 {
  split($1, user, "m")
  split($2, sys, "m")
  printf "%d", user[1] * 60 + user[2] + sys[1] * 60 + sys[2]
}
