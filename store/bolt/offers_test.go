package bolt_test

import (
	"testing"

	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/offer/offertest"
)

func TestOffers(t *testing.T) {
	t.Parallel()
	offertest.Run(t, func(t *testing.T) func() offer.Store {
		dir := t.TempDir()
		return func() offer.Store { return openBeside(t, dir).Offers() }
	})
}
