package nnrt

import (
	"sync"
	"sync/atomic"
)

// LogLevel is the level of a log message.
type LogLevel int

// Log levels, as nnrt_set_log_callback numbers them.
const (
	LogDebug LogLevel = 0
	LogInfo  LogLevel = 1
	LogWarn  LogLevel = 2
	LogError LogLevel = 3
)

// String returns "debug", "info", "warn" or "error".
func (l LogLevel) String() string {
	switch l {
	case LogDebug:
		return "debug"
	case LogInfo:
		return "info"
	case LogWarn:
		return "warn"
	case LogError:
		return "error"
	}
	return "unknown"
}

// LogFunc receives nnrt's log messages. It may be called from any goroutine or from nnrt's own
// worker threads, concurrently, and must not call back into nnrt.
type LogFunc func(level LogLevel, message string)

// The current log function. The C side gets no user pointer: the function lives here so that
// replacing it never frees something a message being logged on another thread still reads.
var (
	currentLog   atomic.Pointer[LogFunc]
	setLogSerial sync.Mutex
)

// SetLogCallback sends nnrt's log messages of level >= minLevel to fn, process-wide. A nil fn
// restores the default (lines on stderr). A panic in fn is recovered and the message dropped,
// since it may run on a thread with no Go caller to report it to.
func SetLogCallback(fn LogFunc, minLevel LogLevel) {
	setLogSerial.Lock()
	defer setLogSerial.Unlock()
	if fn == nil {
		cSetLog(false, minLevel)
		currentLog.Store(nil)
		return
	}
	currentLog.Store(&fn)
	cSetLog(true, minLevel)
}

// deliverLog is called by the exported trampoline target for every message.
func deliverLog(level LogLevel, message string) {
	fn := currentLog.Load()
	if fn == nil {
		return
	}
	defer func() { _ = recover() }()
	(*fn)(level, message)
}
