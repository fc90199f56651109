# Exercise busybox's shell and applets deterministically.
# Run as: busybox sh applets.sh WORKDIR
# Output must be identical under qemu-riscv32 and rv32vm: it never prints times, pids, inode
# numbers or the work directory's path. Each section starts with a "== name" line so a
# divergence is easy to place.

# shellcheck shell=sh disable=SC2050,SC2157,SC3043 # constant tests and `local` are the point here
set -u
umask 022
work="${1:?usage: busybox sh applets.sh WORKDIR}"
mkdir -p "$work" || exit 1
cd "$work" || exit 1

section() { echo "== $1"; }

section "arithmetic"
a=7
b=3
echo "$((a + b)) $((a - b)) $((a * b)) $((a / b)) $((a % b)) $((-a / b)) $((-a % b))"
echo "$((a << 4)) $((a >> 1)) $((a & b)) $((a | b)) $((a ^ b)) $((~a)) $((!a)) $((a > b ? a : b))"
echo "$((2147483647 + 1)) $((9223372036854775807)) $(( (1 << 40) / 3 ))"
i=0
i=$((i + 5))
: $((i *= 3))
echo "i=$i"
echo "$(( 0x1f + 010 ))"

section "loops and conditionals"
total=0
for n in 1 2 3 4 5 6 7 8 9 10; do
    total=$((total + n * n))
done
echo "sum of squares: $total"
n=0
while [ $n -lt 5 ]; do
    n=$((n + 1))
    [ $n -eq 3 ] && continue
    printf '%s ' "$n"
done
echo
n=10
until [ $n -le 7 ]; do
    n=$((n - 1))
done
echo "until stopped at $n"
for word in apple banana cherry; do
    case "$word" in
    a*) echo "$word starts with a" ;;
    *an*) echo "$word contains an" ;;
    *) echo "$word is other" ;;
    esac
done
if [ -z "" ] && [ -n "x" ] && [ "abc" = "abc" ] && [ "abc" != "abd" ]; then echo "string tests ok"; fi
if [ 5 -gt 3 ] && [ 3 -le 3 ] && ! [ 2 -ge 4 ]; then echo "numeric tests ok"; fi
test 1 -eq 2 || echo "test 1 -eq 2 is false"

section "functions"
fib() {
    if [ "$1" -lt 2 ]; then
        echo "$1"
        return
    fi
    local x y
    x=$(fib $(($1 - 1)))
    y=$(fib $(($1 - 2)))
    echo $((x + y))
}
echo "fib(12) = $(fib 12)"
fact() {
    local n=$1 r=1
    while [ "$n" -gt 1 ]; do
        r=$((r * n))
        n=$((n - 1))
    done
    echo "$r"
}
echo "20! = $(fact 20)"
status_of() { return "$1"; }
status_of 7
echo "return status: $?"
set -- alpha beta "gamma delta"
echo "args: $# first=$1 last=$3"
shift
echo "after shift: $# $*"
for arg in "$@"; do echo "[$arg]"; done

section "parameter expansion"
path=/usr/local/lib/libfoo.so.1.2
echo "${path##*/} ${path%/*} ${path#*/} ${path%%.*} ${#path}"
unset maybe
echo "${maybe:-default} ${maybe:=assigned} $maybe"
s="Hello World"
echo "${s:6} ${s:0:5} ${s/World/There} ${s//o/0}"
IFS=: read -r f1 f2 f3 <<EOF
one:two:three:four
EOF
echo "f1=$f1 f2=$f2 f3=$f3"

section "here-docs"
name=world
cat <<EOF
expanded: hello $name, $((6 * 7))
EOF
cat <<'EOF'
literal: hello $name, $((6 * 7))
EOF
cat <<-EOF
	tab-stripped line
	EOF

section "pipes and redirections"
seq 1 20 | grep 1 | sort -r | head -n 3 | tr '\n' ' '
echo
echo "first" >out.txt
echo "second" >>out.txt
printf 'third\n' >>out.txt
wc -l <out.txt
cat out.txt | tail -n 2
{ echo "to stderr" >&2; echo "to stdout"; } 2>err.txt
echo "stderr captured: $(cat err.txt)"
ls nonexistent-file >/dev/null 2>&1 || echo "ls of missing file failed as expected"
exec 3>fd3.txt
echo "via fd 3" >&3
exec 3>&-
cat fd3.txt
result=$(echo "command substitution" | tr a-z A-Z)
echo "$result"
(cd / && echo "subshell cd does not leak")
echo "outer dir unchanged: $(basename "$(pwd)")" | sed 's/: .*/: ok/'
(exit 3)
echo "subshell exit: $?"
false | true
echo "pipeline status: $?"

section "globbing"
mkdir -p globdir
cd globdir
touch a1.txt a2.txt a10.txt b.txt c.log .hidden
echo *.txt
echo a?.txt
echo [ab]*.txt
echo *.none
echo .h*
cd ..

section "files"
mkdir -p tree/sub/deeper
echo "file one" >tree/one.txt
echo "file two" >tree/sub/two.txt
printf 'no newline' >tree/sub/deeper/three.dat
cp tree/one.txt tree/copy.txt
mv tree/copy.txt tree/moved.txt
ln -s one.txt tree/link.txt
touch tree/empty
ls tree
ls -a tree/sub
ls -p tree
ls -R tree
cat tree/link.txt
readlink tree/link.txt
stat -c '%n %s %A' tree/one.txt tree/empty tree/sub/deeper/three.dat
basename /a/b/c.txt .txt
dirname /a/b/c.txt
rm tree/empty
[ -e tree/empty ] || echo "removed"
[ -d tree/sub ] && [ -f tree/one.txt ] && [ -L tree/link.txt ] && echo "file type tests ok"

section "find and xargs"
find tree -type f | sort
find tree -name '*.txt' | sort
find tree -type d | sort
find tree -size +0 -type f | sort | xargs wc -c
find tree -name '*.txt' -print0 | xargs -0 cat | sort
echo "a b c d e" | xargs -n 2 echo "pair:"
printf '%s\n' x y z | xargs -I{} echo "item {}"
find tree -maxdepth 1 -type f -exec echo "exec: {}" \; | sort

section "text: sort uniq cut tr head tail wc"
cat >data.txt <<EOF
banana 3 yellow
apple 10 red
cherry 7 red
apple 2 green
date 10 brown
banana 3 yellow
EOF
sort data.txt
sort -r data.txt
sort -k2,2n -k1,1 data.txt
sort -k2 -n -r data.txt | head -n 2
sort -u data.txt
cut -d' ' -f1 data.txt | sort | uniq -c
cut -c1-3 data.txt | tr '\n' ','
echo
tr 'a-z' 'A-Z' <data.txt | head -n 2
echo "hello    world" | tr -s ' '
echo "remove vowels" | tr -d 'aeiou'
head -c 10 data.txt
echo
tail -c 12 data.txt
wc data.txt
wc -w <data.txt
seq 10 -3 -5 | tr '\n' ' '
echo
seq -w 8 11 | tr '\n' ' '
echo
seq -s , 1 5

section "sed"
sed 's/a/A/g' data.txt | head -n 2
sed -n '2,3p' data.txt
sed '/apple/d' data.txt
sed -e 's/\([a-z]*\) \([0-9]*\)/\2 \1/' data.txt | head -n 3
sed -n '1!G;h;$p' data.txt
sed 'y/abc/xyz/' data.txt | head -n 1
printf 'one\ntwo\nthree\n' | sed -n '$='
echo "path/to/file" | sed 's|/|::|g'
sed '2i\
inserted line' data.txt | head -n 3

section "awk"
awk '{ sum += $2 } END { print "total", sum, "avg", sum / NR }' data.txt
awk '$3 == "red" { print NR": "$1 }' data.txt
awk '{ count[$1]++ } END { for (k in count) print k, count[k] }' data.txt | sort
awk 'BEGIN { printf "%d %5.2f %e %s %c\n", 42.9, 3.14159, 12345.678, "str", 65 }'
awk 'BEGIN { x = sin(1) + cos(2) * exp(0.5) - log(10) + sqrt(2) + atan2(1, 2); printf "%.10f\n", x }'
awk 'BEGIN { print int(-3.7), int(3.7), 2^10, 7 % 3, -7 % 3, 1e6, 1e-5, 0.1 + 0.2 }'
awk 'BEGIN { s = "hello world"; n = split(s, parts, " "); print n, parts[2], length(s), substr(s, 3, 4), index(s, "wor"), toupper(s) }'
awk 'BEGIN { s = "aaa bbb aaa"; gsub(/a+/, "X", s); print s; t = "x.y.z"; sub(/\./, "-", t); print t }'
awk 'function sq(v) { return v * v } BEGIN { for (i = 1; i <= 5; i++) printf "%d ", sq(i); print "" }'
awk -F: 'BEGIN { OFS = "|" } { $1 = $1; print }' <<EOF
a:b:c
1:2:3
EOF
awk 'BEGIN { srand(42); a = rand(); srand(42); b = rand(); print (a == b), (a >= 0 && a < 1) }'
awk 'BEGIN { for (i = 0; i < 20000; i++) s += i * 0.5; printf "%.1f\n", s }'
seq 1 100 | awk '$1 % 7 == 0 { printf "%s,", $1 } END { print "" }'

section "grep"
grep apple data.txt
grep -c red data.txt
grep -v -n a data.txt
grep -E '^(apple|date) [0-9]+' data.txt
grep -i BANANA data.txt | head -n 1
grep -o '[0-9][0-9]*' data.txt | tr '\n' ' '
echo
grep -q nothing-like-this data.txt || echo "grep -q found nothing"
grep -l apple data.txt out.txt

section "expr and test"
expr 3 + 4
expr 10 / 3
expr 10 % 3
expr 6 \* 7
expr length "hello"
expr substr "abcdef" 2 3
expr "abc123" : '[a-z]*'
expr "abc123" : 'abc\([0-9]*\)'
expr 5 \> 3
expr 2 = 3 || echo "expr false gives status $?"
expr 9223372036854775807 - 1

section "printf"
printf '%d|%5d|%-5d|%05d|%x|%o|%X\n' 42 42 42 42 255 8 255
printf '%s|%10s|%-10s|%.2s\n' str right left truncate
printf '%f|%.2f|%10.3f|%-10.1f|%e|%.3e|%g|%g\n' 3.14159 2.71828 1.5 -2.25 12345.6789 0.000123 100000 1e-5
printf '%.0f %.0f %.0f %.0f\n' 0.5 1.5 2.5 -0.5
printf '%c%c%c\n' A B C
printf 'escapes: \t tab \\ backslash \101 octal\n'
printf '%s\n' multiple args reuse format
printf '%b\n' 'with\tescape'

section "checksums"
seq 1 1000 | md5sum
seq 1 1000 | sha256sum
seq 1 1000 | sha1sum
printf 'abc' | md5sum
printf '' | sha256sum
echo "The quick brown fox jumps over the lazy dog" >fox.txt
md5sum fox.txt
sha256sum fox.txt
cksum fox.txt
md5sum fox.txt >fox.md5
md5sum -c fox.md5

section "od hexdump base64"
printf 'Hello, RISC-V!\n\001\377' >bytes.bin
od -c bytes.bin
od -x bytes.bin
od -b bytes.bin
od -d bytes.bin
hexdump -C bytes.bin
xxd bytes.bin
base64 bytes.bin
base64 bytes.bin | base64 -d | cmp - bytes.bin && echo "base64 round trip ok"

section "dd"
dd if=/dev/zero bs=1024 count=5 2>/dev/null | wc -c
dd if=/dev/zero of=zeros.bin bs=512 count=3 2>/dev/null
wc -c <zeros.bin
dd if=fox.txt bs=1 skip=4 count=5 2>/dev/null
echo
dd if=/dev/zero bs=4096 count=256 2>/dev/null | md5sum
printf 'XYZ' | dd of=fox.txt bs=1 seek=4 conv=notrunc 2>/dev/null
head -n 1 fox.txt

section "gzip and bzip2"
seq 1 5000 >numbers.txt
md5sum numbers.txt
gzip -c numbers.txt >numbers.gz
gunzip -c numbers.gz | md5sum
zcat numbers.gz | tail -n 1
gzip -9 -c <numbers.txt | gunzip | md5sum
gzip -1 -c <numbers.txt | wc -c
gzip -9 -c <numbers.txt | wc -c
cp numbers.txt again.txt
gzip again.txt
[ -f again.txt.gz ] && [ ! -f again.txt ] && echo "gzip replaced the file"
gunzip again.txt.gz
cmp again.txt numbers.txt && echo "gzip file round trip ok"
bzip2 -c numbers.txt | bunzip2 | md5sum

section "tar"
tar cf tree.tar tree
tar tf tree.tar | sort
mkdir -p extract
tar xf tree.tar -C extract
diff -r tree extract/tree && echo "tar round trip identical"
tar cf - tree | gzip -c >tree.tgz
gunzip -c tree.tgz | tar tf - | sort | md5sum
tar tzf tree.tgz | wc -l
cat extract/tree/sub/two.txt

section "diff and cmp"
printf 'line1\nline2\nline3\n' >left.txt
printf 'line1\nchanged\nline3\nline4\n' >right.txt
diff left.txt right.txt
echo "diff status: $?"
cmp left.txt right.txt
echo "cmp status: $?"
cmp left.txt left.txt && echo "cmp same"

section "misc applets"
date -u -d @1234567890 '+%Y-%m-%d %H:%M:%S %A'
date -u -d @0
sleep 0.05 && echo "slept"
yes | head -n 3
yes abc | head -n 2
true && echo "true is true"
false || echo "false is false"
echo "scale=30; 4*a(1)" | bc -l
echo "2 10 ^ p" | dc
factor 1234567890 4294967291
echo "hello" | rev
printf 'b\na\nc\n' | tac
printf 'a\tb\n' | expand
printf 'one\ntwo\n' | nl
printf 'x\ny\n' >p1.txt
printf '1\n2\n' >p2.txt
paste p1.txt p2.txt
echo "a long line to fold into pieces" | fold -w 10
uname -m
which sh >/dev/null 2>&1; echo "which sh exit status is a number: $(( $? >= 0 ))"
strings bytes.bin
du -s tree >/dev/null && echo "du ran"
split -l 2000 numbers.txt part_
ls part_* | tr '\n' ' '
echo
cat part_* | cmp - numbers.txt && echo "split parts reassemble"
truncate -s 100 sized.bin
wc -c <sized.bin

section "background job and wait"
(sleep 0.05; echo "background done") &
wait
echo "after wait"

section "end"
rm -rf tree extract globdir
ls | sort | tr '\n' ' '
echo
echo "all sections ran"
exit 0
