package serverless

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// writeAtomic replaces (or, with exclusive, creates) file with data so that a
// reader never sees a partial file: a synced temporary file in the same
// directory is renamed over it. With exclusive an existing file is an error
// and is left untouched.
func writeAtomic(file string, data []byte, exclusive bool) error {
	dir := filepath.Dir(file)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if exclusive {
		// A hard link fails if file exists, atomically: the check and the
		// creation cannot be split by another writer.
		if err := os.Link(tmp.Name(), file); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%s already exists: %w", file, os.ErrExist)
			}
			return err
		}
		return nil
	}
	return os.Rename(tmp.Name(), file)
}

// ErrLocked is returned when another process holds a file's lock past the wait.
var ErrLocked = errors.New("locked by another process")

// lockFile takes an exclusive advisory lock on file+".lock", trying for at
// most wait; the returned function releases it.
func lockFile(file string, wait time.Duration, sleep func(time.Duration)) (func(), error) {
	f, err := os.OpenFile(file+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	const step = 50 * time.Millisecond
	for waited := time.Duration(0); ; waited += step {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || waited >= wait {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s: %w (waited %s)", file+".lock", ErrLocked, wait)
			}
			return nil, err
		}
		sleep(step)
	}
}
