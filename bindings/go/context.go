package nnrt

import (
	"runtime"
	"unsafe"
)

// Context is a backend and device that arrays live on and ops run on, with a thread pool and a
// memory cache. A Context is safe for concurrent use by many goroutines. Objects made from it keep
// it alive, so it may be closed before them.
type Context struct {
	h cHandle
}

// ContextOptions are the options of NewContext; zero fields take nnrt's defaults. Passing a map or
// JSON text to NewContext instead reaches every option, including ones added later.
type ContextOptions struct {
	Backend       string        `json:"backend,omitempty"` // "auto", "reference", "onednn", "cudnn" or a plugin's name
	Device        int           `json:"device,omitempty"`
	Strict        bool          `json:"strict,omitempty"` // an op the backend cannot run is ErrUnsupported, no fallback
	Threads       int           `json:"threads,omitempty"`
	Deterministic bool          `json:"deterministic,omitempty"` // bit-identical results for the same inputs and seed
	Seed          int64         `json:"seed,omitempty"`
	DefaultDType  string        `json:"default_dtype,omitempty"` // "f32", "f16" or "bf16"
	Cache         *CacheOptions `json:"cache,omitempty"`
	// MapCheckpoints false makes Load read checkpoint files rather than map them (nil: nnrt's
	// default, true: mapped, the parameters being the file's pages; see nnrt_model_load in nnrt.h).
	MapCheckpoints *bool `json:"map_checkpoints,omitempty"`
}

// CacheOptions limit the context's memory cache.
type CacheOptions struct {
	MaxCachedBytes int64 `json:"max_cached_bytes"`
	MaxBlockBytes  int64 `json:"max_block_bytes"`
}

// NewContext creates a context. options is nil for the defaults, a ContextOptions, a map, or JSON
// text (see nnrt_context_create in nnrt.h for every key). It fails with ErrVersion if the loaded
// library speaks another ABI than this binding.
func NewContext(options any) (*Context, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	text, err := toJSON(options)
	if err != nil {
		return nil, err
	}
	p, err := cContextCreate(text)
	if err != nil {
		return nil, err
	}
	c := &Context{h: newCHandle("context", p, cContextRelease)}
	runtime.SetFinalizer(c, (*Context).Close)
	return c, nil
}

// handle returns the context's handle, or nil for a nil *Context (reported as an error).
func (c *Context) handle() *cHandle {
	if c == nil {
		return nil
	}
	return &c.h
}

// borrow lends the C pointer for one call; the caller defers c.h.giveBack().
func (c *Context) borrow() (unsafe.Pointer, error) { return c.handle().borrow() }

// Describe returns the context as JSON: version, backend, device, threads, usable backends,
// plugins found (with the reason one did not load), devices and memory cache statistics.
func (c *Context) Describe() (string, error) {
	p, err := c.borrow()
	if err != nil {
		return "", err
	}
	defer c.h.giveBack()
	return cContextDescribe(p)
}

// Close releases the caller's reference. Objects made from the context keep it alive; calling
// Close again does nothing.
func (c *Context) Close() {
	if c == nil {
		return
	}
	runtime.SetFinalizer(c, nil)
	c.h.close()
}
