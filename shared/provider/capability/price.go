package capability

import (
	"fmt"
	"slices"
	"strings"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/settings"
)

// A Priced is one provider model: what it accepts and what a second of
// its video costs. Every backend's table prices its models with it, and
// CheckPrices is the one check that no start sells below that cost.
type Priced struct {
	// ID is the provider's model id, for messages.
	ID     string
	Limits Limits
	// Audio and Silent are the price of a second of video by resolution,
	// with audio and without. A provider that bills audio always has
	// both the same.
	Audio, Silent map[string]float64
}

// Cost is the provider's price of one video of d seconds at res.
func (m Priced) Cost(res string, d int, audio bool) (float64, bool) {
	prices := m.Silent
	if audio {
		prices = m.Audio
	}
	p, ok := prices[res]
	return p * float64(d), ok
}

// CheckPrices fails when one of our models, on the provider model route
// gives for it (ok false: none is known), is sold below its cost at
// creditUSD a credit, for any start the backend accepts for it: every
// duration, every resolution of the catalog the provider renders at
// that duration, and every value of generateAudio its audio rule takes.
// The error lists every such start.
func CheckPrices(backend string, route func(model string) (Priced, bool), creditUSD float64) error {
	return CheckPricesOf(catalog.IDs(), backend, route, creditUSD)
}

// CheckPricesOf is CheckPrices for some of our models only: those a
// provider route serves (settings.Routes).
func CheckPricesOf(models []string, backend string, route func(model string) (Priced, bool), creditUSD float64) error {
	route = Declared(route)
	var losses []string
	for _, ours := range catalog.All() {
		if !slices.Contains(models, ours.ID) {
			continue
		}
		m, ok := route(ours.ID)
		if !ok {
			losses = append(losses, fmt.Sprintf("%s: %q has no price on %s", ours.ID, m.ID, backend))
			continue
		}
		for d, resolutions := range m.Limits.ResolutionsOf(ours.ID) {
			for _, res := range resolutions {
				for _, audio := range m.Limits.Audio.AudioChoices() {
					cost, ok := m.Cost(res, d, audio)
					income := float64(ours.PriceAt(res, audio)) * creditUSD
					if !ok || income < cost {
						losses = append(losses, fmt.Sprintf("%s on %s: %d s at %s %s costs $%.2f, sold for %d credits = $%.2f",
							ours.ID, m.ID, d, res, audioWord(audio), cost, ours.PriceAt(res, audio), income))
					}
				}
			}
		}
	}
	if len(losses) > 0 {
		slices.Sort(losses)
		return fmt.Errorf("at %s=%g, %s sells below cost: %s", settings.CreditUSD, creditUSD, backend, strings.Join(losses, "; "))
	}
	return nil
}

func audioWord(audio bool) string {
	if audio {
		return "with audio"
	}
	return "without audio"
}

// Served is what a provider route's backend accepts for each of the
// models it serves (settings.Routes), priced by priced: a model the
// backend's table does not know, or one sold below its cost at
// creditUSD (CheckPricesOf), is an error. Each adapter's table reads
// its own route with it, so that the check is written once.
func Served(served []string, backend string, priced func(ours string) (Priced, bool), creditUSD float64) (map[string]Limits, error) {
	priced = Declared(priced)
	out := map[string]Limits{}
	for _, ours := range served {
		m, ok := priced(ours)
		if !ok {
			return nil, fmt.Errorf("%s maps %s to %q, which is not a model of %s this service knows", settings.Routes, ours, m.ID, backend)
		}
		out[ours] = m.Limits
	}
	if err := CheckPricesOf(served, backend, priced, creditUSD); err != nil {
		return nil, err
	}
	return out, nil
}

// Mapped is the table of a backend that maps each of our models to a
// provider model priced by priced (or, where priced knows none, by the
// operator's declaration: Declared). A model neither knows is unknown's
// error, and a table that sells a start below its cost at creditUSD is
// CheckPrices', so that the stack stops at start-up rather than charge
// for starts it cannot honour, or honour at a loss. Each adapter's table
// of the generator variables is this, with its own lookup and message.
func Mapped(backend string, priced func(ours string) (Priced, bool), creditUSD float64, unknown func(ours string) error) (Table, error) {
	lookup := Declared(priced)
	t := Table{Backend: backend, Models: map[string]Limits{}}
	for _, ours := range catalog.IDs() {
		m, ok := lookup(ours)
		if !ok {
			return Table{}, unknown(ours)
		}
		t.Models[ours] = m.Limits
	}
	if err := CheckPrices(backend, priced, creditUSD); err != nil {
		return Table{}, err
	}
	return t, nil
}

// Declared is priced, falling back, for one of our models priced knows
// no provider model for, to what the operator declared of the provider
// model behind it (GEN_MODELS, catalog.Model.Provider): a model on a
// provider gen has no table for is validated and price-checked as one
// gen knows.
func Declared(priced func(ours string) (Priced, bool)) func(ours string) (Priced, bool) {
	return func(ours string) (Priced, bool) {
		m, ok := priced(ours)
		if ok {
			return m, true
		}
		model, found := catalog.Lookup(ours)
		if !found || model.Provider == nil {
			return m, false
		}
		return declaredPriced(m.ID, model), true
	}
}

// declaredPriced is the provider model id as model's declaration says
// it: its modes and resolutions are the model's, one video a request
// and personGeneration allow_adult only (nothing declared says more),
// and the declared cost at every resolution.
func declaredPriced(id string, model catalog.Model) Priced {
	d := model.Provider
	l := Limits{Durations: slices.Clone(d.Durations), Resolutions: map[int][]string{},
		AspectRatios: slices.Clone(d.AspectRatios), MaxSampleCount: 1, PersonGeneration: map[string][]string{},
		Seed: d.Seed, Audio: map[string]Audio{"optional": AudioOptional, "always": AudioAlways, "never": AudioNever}[d.Audio]}
	for _, m := range catalog.Modes {
		if model.Supports(m) {
			l.Modes = append(l.Modes, m)
			l.PersonGeneration[m] = []string{"allow_adult"}
		}
	}
	usd := map[string]float64{}
	for _, r := range model.Resolutions {
		usd[r] = d.USDPerSecond
	}
	for _, s := range d.Durations {
		l.Resolutions[s] = slices.Clone(model.Resolutions)
	}
	if id == "" {
		id = "the declared provider model"
	}
	return Priced{ID: id, Limits: l, Audio: usd, Silent: usd}
}
