package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// choicesOf annotates a flag with the values it accepts, from its
// option's declaration (the choices tag): completion offers them.
const choicesOf = "zarf-planner/choices"

// completeValues registers, for every flag of cmd and the commands below
// it that declares the values it accepts (a format flag's formats, an
// option's choices), a shell completion offering those values and no
// file names. The values are the flags' own annotations, so completion
// offers what the flag accepts and nothing listed by hand.
func completeValues(cmd *cobra.Command) {
	cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
		values := f.Annotations[formatsOf]
		if len(values) == 0 {
			values = f.Annotations[choicesOf]
		}
		if len(values) == 0 {
			return
		}
		// A flag registered twice is a mistake of this package that its
		// tests find (a value offered by neither); never a user's.
		_ = cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
	})
	for _, c := range cmd.Commands() {
		completeValues(c)
	}
}
