package devstack

import (
	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/devkey"
)

// DevKeyPath is where the local dev API key is kept (devkey.Path).
func DevKeyPath(dataDir string) string { return devkey.Path(dataDir) }

func hashOf(key string) string { return apikey.Hash(key) }
