// Linked into the test binary only by `scripts/sanitize thread` (ISTHMUS_SANITIZE=thread); see TSanMutexShim.c.
