package suitecopy

import "bytes"

// Repo is the suite's repository name, which every copy keeps: the release,
// the image names and the tests look for it.
const Repo = "runpod-gpu"

// Rewrite returns text with every reference to from's copy of the suite
// (from/runpod-gpu) turned into to's, and how many it turned. A reference
// is from/runpod-gpu where from is the whole owner, not the end of a longer
// name or host (my-org/runpod-gpu, example.org/runpod-gpu stay), and
// runpod-gpu the whole repository name or the start of one of the suite's
// own image names (runpod-gpu-runner-cuda), not of another word
// (runpod-gpux stays).
func Rewrite(text []byte, from, to string) ([]byte, int) {
	old := []byte(from + "/" + Repo)
	if from == to || !bytes.Contains(text, old) {
		return text, 0
	}
	var out bytes.Buffer
	out.Grow(len(text) + 64)
	n, rest, at := 0, text, 0
	for {
		i := bytes.Index(rest, old)
		if i < 0 {
			break
		}
		abs := at + i
		end := abs + len(old)
		if (abs == 0 || !ownerByte(text[abs-1])) && (end == len(text) || !wordByte(text[end])) {
			out.Write(text[at:abs])
			out.WriteString(to + "/" + Repo)
			n++
		} else {
			out.Write(text[at:end])
		}
		at = end
		rest = text[at:]
	}
	if n == 0 {
		return text, 0
	}
	out.Write(text[at:])
	return out.Bytes(), n
}

// ownerByte is a byte that, just before the owner, makes it the end of a
// longer owner name or of a host name.
func ownerByte(b byte) bool {
	return wordByte(b) || b == '-' || b == '.'
}

// wordByte is a letter, a digit or an underscore.
func wordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}
